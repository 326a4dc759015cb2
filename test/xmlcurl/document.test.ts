/**
 * The xml_curl document writer (src/xmlcurl/document.ts) uses xmlbuilder2's callback builder
 * since issue 15; until then xmlbuilder2's DOM builder wrote the documents. Both are run here on
 * the same trees, with values full of what must be escaped, and must agree byte for byte; what the
 * DOM builder refused (characters XML does not allow) the writer refuses as well. One intended
 * difference: xmlbuilder2 leaves a value's `&amp;` or `&lt;` as it is (no double encoding), so
 * FreeSWITCH read `&` where the value said `&amp;`; the writer escapes every `&` first, so
 * FreeSWITCH reads the value as it was given.
 *
 * Since then the dialplan document is written from fragments cut out of an xmlbuilder2 rendering,
 * with the call's values in escaped holes (src/xmlcurl/dialplan-document.ts): it is held here to
 * the same bytes as both builders on the same values (the hostile ones below, the injection
 * attacks of injection.test.ts, random strings), in every hole and in several shapes.
 */
import t from 'tap'
import { create } from 'xmlbuilder2'
import { el, renderDocument, UnsafeValueError, type XmlNode } from '../../src/xmlcurl/document.js'
import { dialplanDocument, dialplanTree, type DialplanAction } from '../../src/xmlcurl/dialplan-document.js'
import { ATTACKS } from './helpers.js'

/** The previous writer, as it was (xmlbuilder2's DOM, pretty-printed, headless, well-formed). */
function byXmlbuilder2(children: readonly XmlNode[]): string {
  const root = create()
  const append = (parent: ReturnType<typeof create>, node: XmlNode): void => {
    const child = parent.ele(node.name, node.attrs ?? {})
    for (const c of node.children ?? []) append(child, c)
  }
  append(root, el('document', { type: 'freeswitch/xml' }, children))
  return `${root.end({ headless: true, prettyPrint: true, wellFormed: true }).replace(/\$(?=\$)/g, '&#36;')}\n`
}

const VALUES = [
  '', 'plain', 'a=<b>&"c\'', ']]>', '$${hostname}', '$$$', '${api(system id)}', '&amp;', '&#36;', 'é ü 日本 😀',
  '\u202e', '\u200b', '\ufeff', '<!ENTITY x "y">', '<?xml?>', '<X-PRE-PROCESS cmd="set">', '<!--#', "'single'", 'a > b', '%0a',
]

function tree(i: number): XmlNode[] {
  const v = (k: number) => VALUES[(i + k) % VALUES.length] as string
  return [
    el('section', { name: 'dialplan', description: v(0) }, [
      el('context', { name: v(1) }, [
        el('extension', { name: v(2) }, [
          el('condition', { field: 'destination_number', expression: v(3) }, [el('action', { application: 'set', data: v(4) }), el('action', { application: v(5) })]),
        ]),
      ]),
    ]),
    el('section', { name: 'directory' }),
    el('section', { name: 'result' }, []),
  ]
}

/** A value xmlbuilder2 would not have double-encoded. */
const entityLike = (v: string) => /&(#[0-9]+|#x[0-9a-f]+|[a-z]+);/i.test(v)

t.test('the callback writer writes what the DOM builder wrote, byte for byte', async (t) => {
  const plain = VALUES.filter((v) => !entityLike(v))
  const treeOf = (i: number) => tree(i).map((n) => JSON.parse(JSON.stringify(n, (_k, v: unknown) => (typeof v === 'string' && entityLike(v) ? (plain[i % plain.length] as string) : v))) as XmlNode)
  for (let i = 0; i < VALUES.length; i++) t.equal(renderDocument(treeOf(i)), byXmlbuilder2(treeOf(i)), `tree ${i}`)
})

t.test('a value that looks like an entity reaches FreeSWITCH as it was given', async (t) => {
  const doc = renderDocument([el('action', { data: 'AT&amp;T &#36; &lt;' })])
  t.match(doc, 'data="AT&amp;amp;T &amp;#36; &amp;lt;"', 'every & escaped')
  t.match(byXmlbuilder2([el('action', { data: 'AT&amp;T' })]), 'data="AT&amp;T"', 'where xmlbuilder2 left the entity, which FreeSWITCH then decoded')
})

t.test('values XML cannot hold are refused, as xmlbuilder2 refused them', async (t) => {
  for (const bad of ['\ud800', 'x\udfff', '\ufffe', 'a\uffff', 'nl\n', 'nul\u0000', 'del\u007f']) {
    const doc = [el('section', { name: 'dialplan' }, [el('action', { data: bad })])]
    t.throws(() => renderDocument(doc), UnsafeValueError, JSON.stringify(bad))
    if (!['\n', '\u0000', '\u007f'].some((c) => bad.includes(c))) t.throws(() => byXmlbuilder2(doc), `xmlbuilder2 refused ${JSON.stringify(bad)} too`)
  }
  t.equal(renderDocument([el('a', { v: '😀' })]).includes('😀'), true, 'a surrogate pair is a character')
})

/** The template's result, or the error it threw. */
const outcome = (write: () => string): string => {
  try {
    return write()
  } catch (e) {
    return e instanceof UnsafeValueError ? 'refused (UnsafeValueError)' : `threw ${String(e)}`
  }
}

/** Shapes the routes produce (one action; with and without data; a hunt's long list) with values v(0..). */
function shapes(v: (k: number) => string): Array<[string, string, string, DialplanAction[]]> {
  return [
    [v(0), v(1), v(2), [{ app: v(3), data: v(4) }]],
    [v(1), 'cod_route', v(3), [{ app: 'set', data: v(0) }, { app: v(2) }, { app: 'bridge', data: v(4) }, { app: 'hangup' }]],
    [v(2), v(3), '^1002$', Array.from({ length: 12 }, (_, k) => (k % 3 === 2 ? { app: v(k) } : { app: 'export', data: v(k + 1) }))],
    [v(4), 'cod_dial', v(0), [{ app: v(1) }]],
  ]
}

t.test('the dialplan template writes what xmlbuilder2 writes, byte for byte, with hostile values in every hole', async (t) => {
  const values = [...VALUES, ...ATTACKS, '', '$', '$$', 'a$', '$a$$b', '&', '&&amp;', '"""', '<<>>']
  let compared = 0
  let refused = 0
  for (let i = 0; i < values.length; i++) {
    for (const [context, extension, expression, actions] of shapes((k) => values[(i + k) % values.length] as string)) {
      const viaTemplate = outcome(() => dialplanDocument(context, extension, expression, actions))
      const viaCallbackWriter = outcome(() => renderDocument(dialplanTree(context, extension, expression, actions)))
      t.equal(viaTemplate, viaCallbackWriter, `values from ${i}: the template and the callback writer`)
      if (viaTemplate.startsWith('refused')) refused++
      const strings = [context, extension, expression, ...actions.flatMap((a) => [a.app, a.data ?? ''])]
      if (!viaTemplate.startsWith('refused') && !strings.some(entityLike)) {
        t.equal(viaTemplate, byXmlbuilder2(dialplanTree(context, extension, expression, actions)), `values from ${i}: the template and the DOM builder`)
        compared++
      }
    }
  }
  t.ok(compared > 40, `compared with the DOM builder ${compared} times`)
  t.ok(refused > 0, 'the attacks with control characters were refused')
})

t.test('the dialplan template agrees with xmlbuilder2 on random strings', async (t) => {
  // A small deterministic generator (no Math.random: a failure must be reproducible).
  let seed = 15
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31)
  const alphabet = ['&', '<', '>', '"', "'", '$', '{', '}', ']', ';', '#', 'a', '1', ' ', 'amp', 'lt', 'é', '😀', '\t', '\n', '\u007f', '\ud800', '\ufffe']
  const random = () => Array.from({ length: next() % 12 }, () => alphabet[next() % alphabet.length]).join('')
  for (let i = 0; i < 500; i++) {
    const actions = Array.from({ length: 1 + (next() % 4) }, () => (next() % 2 === 0 ? { app: random() } : { app: random(), data: random() }))
    const [context, extension, expression] = [random(), random(), random()]
    const viaTemplate = outcome(() => dialplanDocument(context, extension, expression, actions))
    t.equal(viaTemplate, outcome(() => renderDocument(dialplanTree(context, extension, expression, actions))), `random ${i}`)
  }
})

t.test('the dialplan template refuses what xmlbuilder2 refused, in every hole', async (t) => {
  for (const bad of ['\ud800', '\ufffe', 'nl\n', 'nul\u0000', 'del\u007f', 'tab\t']) {
    const cases: Array<[string, () => string]> = [
      ['context', () => dialplanDocument(bad, 'e', 'x', [{ app: 'a' }])],
      ['extension', () => dialplanDocument('c', bad, 'x', [{ app: 'a' }])],
      ['expression', () => dialplanDocument('c', 'e', bad, [{ app: 'a' }])],
      ['application', () => dialplanDocument('c', 'e', 'x', [{ app: 'set', data: 'x' }, { app: bad }])],
      ['data', () => dialplanDocument('c', 'e', 'x', [{ app: 'set', data: bad }])],
    ]
    for (const [hole, write] of cases) t.throws(write, UnsafeValueError, `${JSON.stringify(bad)} as the ${hole}`)
  }
})

t.test('a dialplan document without actions is left to xmlbuilder2 (the condition closes itself)', async (t) => {
  const doc = dialplanDocument('example.test', 'cod_dial', '^1$', [])
  t.equal(doc, renderDocument(dialplanTree('example.test', 'cod_dial', '^1$', [])))
  t.match(doc, /<condition field="destination_number" expression="\^1\$"\/>/)
})
