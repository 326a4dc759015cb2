/**
 * The `action` of `<Record>` and `<GetInput>`: where the call goes once the element has its
 * result. http(s) URLs (a comma list of fallbacks) fetch the next document, POSTed with the
 * call parameters and the element's results; anything else names a Section of this document,
 * as Transfer's failureAction does (transfer.ts). Absent: the next element runs, where the
 * results can be tested as variables.
 */
import { err, ok, type Result } from '../../util/result.js'
import * as C from '../syntax/checks.js'
import type { ParseContext, ElementNode } from '../syntax/reader.js'
import type { Param, ValueCheck } from '../syntax/types.js'
import { NEXT, runtimeError, type ElementContext, type Outcome } from './types.js'

export type ElementAction =
  | { readonly kind: 'urls'; readonly urls: readonly string[] }
  | { readonly kind: 'section'; readonly name: string }

const ACTION_RULE = 'http or https URLs separated by commas, or a Section name'

const ACTION: ValueCheck<ElementAction> = {
  rule: ACTION_RULE,
  convert: (raw): Result<ElementAction, string> => {
    const s = raw.trim()
    if (/^https?:\/\//i.test(s)) {
      const urls = C.urlList.convert(s)
      return urls.ok ? ok({ kind: 'urls', urls: urls.value }) : urls
    }
    if (C.SECTION_NAME_RE.test(s)) return ok({ kind: 'section', name: s })
    return err(`must be ${ACTION_RULE}`)
  },
}

/** Reads `action`; a literal Section name must name a Section of the document. */
export function readAction(node: ElementNode, ctx: ParseContext, element: string): Param<ElementAction> | undefined {
  const action = ctx.optionalAttr(node, 'action', ACTION)
  if (action?.kind === 'literal' && action.value.kind === 'section') ctx.sectionRef(action.value.name, node.pos, `${element} action`)
  return action
}

/** Goes where the action says (the next element without one). */
export function follow(action: ElementAction | undefined, ctx: ElementContext, element: string): Promise<Outcome> | Outcome {
  if (action === undefined) return NEXT
  if (action.kind === 'urls') return ctx.loadDocument(action.urls, 'POST')
  if (!ctx.document.sections.has(action.name)) return runtimeError(`${element} action: there is no Section named ${JSON.stringify(action.name)}`)
  return { kind: 'goto', section: action.name }
}
