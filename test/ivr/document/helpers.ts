import { parseIvrDocument, type IvrDocument, type IvrElement, type IvrLimits } from '../../../src/ivr/document/index.js'

export const wrap = (inner: string): string => `<IVR>${inner}</IVR>`

/** The parsed document; throws (failing the test) with the reason when it was refused. */
export function parsed(xml: string, limits?: Partial<IvrLimits>): IvrDocument {
  const r = parseIvrDocument(xml, limits)
  if (!r.ok) throw new Error(`document refused: ${r.error.reason}`)
  return r.value
}

/** The first top-level element of `<IVR>inner</IVR>`. */
export function first(inner: string): IvrElement {
  const e = parsed(wrap(inner)).body[0]
  if (e === undefined) throw new Error('no element')
  return e
}

/** The reason a document is refused, or 'accepted'. */
export function reason(xml: string, limits?: Partial<IvrLimits>): string {
  const r = parseIvrDocument(xml, limits)
  return r.ok ? 'accepted' : r.error.reason
}

export const refused = (inner: string): string => reason(wrap(inner))

export const lit = <T>(value: T) => ({ kind: 'literal' as const, value })
