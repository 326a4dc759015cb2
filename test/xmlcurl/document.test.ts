/**
 * The xml_curl document writer (src/xmlcurl/document.ts) uses xmlbuilder2's callback builder
 * since issue 15; until then xmlbuilder2's DOM builder wrote the documents. Both are run here on
 * the same trees, with values full of what must be escaped, and must agree byte for byte; what the
 * DOM builder refused (characters XML does not allow) the writer refuses as well. One intended
 * difference: xmlbuilder2 leaves a value's `&amp;` or `&lt;` as it is (no double encoding), so
 * FreeSWITCH read `&` where the value said `&amp;`; the writer escapes every `&` first, so
 * FreeSWITCH reads the value as it was given.
 */
import t from 'tap'
import { create } from 'xmlbuilder2'
import { el, renderDocument, UnsafeValueError, type XmlNode } from '../../src/xmlcurl/document.js'

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
