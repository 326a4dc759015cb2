import t from 'tap'
import { checkInlineIvr } from '../../src/api/inline-ivr.js'

t.test('accepted documents', async (t) => {
  for (const xml of [
    '<IVR/>',
    '<Response></Response>',
    '<?xml version="1.0" encoding="UTF-8"?>\n<!-- menu -->\n<IVR>\n  <Speak language="ja-JP">こんにちは</Speak>\n</IVR>\n',
    '<IVR><Speak><![CDATA[a < b ]]></Speak></IVR>',
    '<IVR><If expr="x GT 1"><Then><Hangup/></Then></If></IVR>',
  ]) {
    t.same(checkInlineIvr(xml), { ok: true, value: undefined }, xml)
  }
})

t.test('full IVR validation: unknown elements and wrong nesting are refused too', async (t) => {
  for (const [xml, reason] of [
    ['<IVR><Dance/></IVR>', /Dance/],
    ['<IVR><Then/></IVR>', /Then/],
    ['<IVR><Play loop="9">a.wav</Play></IVR>', /loop/],
  ] as const) {
    const r = checkInlineIvr(xml)
    t.equal(r.ok, false, xml)
    if (!r.ok) t.match(r.error, reason, xml)
  }
})

t.test('refused documents', async (t) => {
  for (const [xml, reason] of [
    ['', /empty/],
    ['hello', /well-formed/],
    ['<IVR>', /well-formed/],
    ['<IVR></Response>', /well-formed/],
    ['<IVR/>trailing', /after the root/],
    ['leading<IVR/>', /well-formed|outside the root/],
    ['<ivr/>', /root element/],
    ['<Document><IVR/></Document>', /root element/],
    ['<IVR/><Response/>', /only one root/],
    ['<!DOCTYPE IVR><IVR/>', /DOCTYPE/],
    ['<?xml version="1.0"?>\n<!doctype IVR [<!ENTITY a "b">]><IVR>&a;</IVR>', /DOCTYPE/i],
    ['<IVR><!ENTITY a "b"></IVR>', /DOCTYPE|ENTITY/],
  ] as const) {
    const r = checkInlineIvr(xml)
    t.equal(r.ok, false, xml)
    if (!r.ok) t.match(r.error, reason, xml)
  }
})
