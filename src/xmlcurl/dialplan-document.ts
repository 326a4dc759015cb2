/**
 * The dialplan document, written per call from fragments xmlbuilder2 wrote once. Every dialplan
 * document has one shape: document > section > context > extension > condition > a list of
 * actions, each `application` with or without `data`. Only the attribute values change from call
 * to call, so the markup around them is cut once, at load, out of a document rendered by
 * renderDocument (xmlbuilder2's callback writer, document.ts) with markers in place of the values;
 * a call's values go into those holes through attributeText, which checks and escapes them as
 * renderDocument does. Rendering through xmlbuilder2 per call cost about 0.3 ms of CPU per
 * document (issue 15, docs/bench.md); test/xmlcurl/document.test.ts holds this writer to
 * xmlbuilder2's bytes (its DOM builder and its callback writer) on hostile values and shapes.
 */
import { attributeText, el, renderDocument, type XmlNode } from './document.js'

/** One `<action>`: routes.ts Action, repeated here so that the document does not depend on routing. */
export interface DialplanAction {
  readonly app: string
  readonly data?: string
}

/**
 * The document's tree, as xmlbuilder2 writes it (renderDocument): the reference of the fragments.
 * @internal Exported for tests: test/xmlcurl renders the tree two ways and compares.
 */
export function dialplanTree(context: string, extensionName: string, expression: string, actions: readonly DialplanAction[]): XmlNode[] {
  return [
    el('section', { name: 'dialplan', description: 'cod' }, [
      el('context', { name: context }, [
        el('extension', { name: extensionName }, [
          el(
            'condition',
            { field: 'destination_number', expression },
            actions.map((a) => el('action', a.data === undefined ? { application: a.app } : { application: a.app, data: a.data })),
          ),
        ]),
      ]),
    ]),
  ]
}

interface Fragments {
  /** Before the context's name, between it and the extension's name, then the expression, then up to the first action. */
  readonly head: readonly [string, string, string, string]
  /** A line's start up to the application's value (newline and indentation included). */
  readonly actionOpen: string
  /** Between the application's value and the data's value. */
  readonly dataBetween: string
  /** After the last value of an action. */
  readonly actionClose: string
  /** After the last action, to the end of the document. */
  readonly tail: string
}

const HOLE_RE = /@hole\d@/
const hole = (i: number): string => `@hole${i}@`

/** The fragments, cut out of a rendering with markers; throws at load if xmlbuilder2 wrote another layout. */
function cutFragments(): Fragments {
  const actions = [{ app: hole(3), data: hole(4) }, { app: hole(5) }]
  const text = renderDocument(dialplanTree(hole(0), hole(1), hole(2), actions))
  const parts = text.split(HOLE_RE)
  const [p0, p1, p2, p3, p4, p5, p6] = parts
  if (parts.length !== 7 || p0 === undefined || p1 === undefined || p2 === undefined || p3 === undefined || p4 === undefined || p5 === undefined || p6 === undefined) {
    throw new Error('dialplan template: xmlbuilder2 did not write each hole once')
  }
  // p5 is one action's end and the next one's start; each action starts on its own line.
  const lineStart = p5.indexOf('\n')
  const f: Fragments = {
    head: [p0, p1, p2, p3.slice(0, p3.length - (p5.length - lineStart))],
    actionOpen: p5.slice(lineStart),
    dataBetween: p4,
    actionClose: p5.slice(0, lineStart),
    tail: p6.slice(lineStart),
  }
  const rebuilt = write(f, hole(0), hole(1), hole(2), actions, (_where, v) => v)
  if (lineStart <= 0 || rebuilt !== text || parts.some((p) => p.includes('$'))) throw new Error('dialplan template: the fragments do not rebuild what xmlbuilder2 wrote')
  return f
}

function write(f: Fragments, context: string, extensionName: string, expression: string, actions: readonly DialplanAction[], value: typeof attributeText): string {
  let out = f.head[0] + value('context name', context) + f.head[1] + value('extension name', extensionName) + f.head[2] + value('condition expression', expression) + f.head[3]
  for (const a of actions) {
    out += f.actionOpen + value('action application', a.app)
    if (a.data !== undefined) out += f.dataBetween + value('action data', a.data)
    out += f.actionClose
  }
  return out + f.tail
}

const FRAGMENTS = cutFragments()

/**
 * The document of one routed call: the bytes renderDocument(dialplanTree(...)) would write.
 * Throws UnsafeValueError for a value no document may hold, as renderDocument does.
 */
export function dialplanDocument(context: string, extensionName: string, expression: string, actions: readonly DialplanAction[]): string {
  // Without actions the condition closes itself: a shape no route produces, left to xmlbuilder2.
  if (actions.length === 0) return renderDocument(dialplanTree(context, extensionName, expression, actions))
  return write(FRAGMENTS, context, extensionName, expression, actions, attributeText)
}
