import t from 'tap'
import { decodeInlineXml, parseIvrDocument } from '../../../src/ivr/document/index.js'

const doc = '<IVR><Speak>こんにちは、ようこそ?</Speak><Hangup/></IVR>'
const std = Buffer.from(doc).toString('base64')
const urlSafe = Buffer.from(doc).toString('base64url')

t.test('standard and URL-safe alphabets, padding optional', async (t) => {
  t.ok(std.includes('+') || std.includes('/') || std.endsWith('='), 'the sample exercises the standard alphabet')
  t.not(std.replace(/=+$/, ''), urlSafe, 'the sample differs between alphabets')
  t.same(decodeInlineXml(std), { ok: true, value: doc })
  t.same(decodeInlineXml(std.replace(/=+$/, '')), { ok: true, value: doc })
  t.same(decodeInlineXml(urlSafe), { ok: true, value: doc })
  const padded = urlSafe + '='.repeat((4 - (urlSafe.length % 4)) % 4)
  t.same(decodeInlineXml(padded), { ok: true, value: doc })
  // Every length remainder: 0, 2 and 3 characters in the last group.
  for (const s of ['<IVR/>', '<IVR/> ', '<IVR/>  ']) {
    t.same(decodeInlineXml(Buffer.from(s).toString('base64')), { ok: true, value: s }, JSON.stringify(s))
    t.same(decodeInlineXml(Buffer.from(s).toString('base64url')), { ok: true, value: s }, JSON.stringify(s))
  }
  const r = decodeInlineXml(std)
  t.ok(r.ok && parseIvrDocument(r.value).ok, 'the decoded document parses')
})

t.test('strict: invalid characters, lengths and padding are refused', async (t) => {
  t.match(decodeInlineXml(''), { ok: false, error: /empty/ })
  t.match(decodeInlineXml('PElWUi8+ '), { ok: false, error: /character " " at position 9/ })
  t.match(decodeInlineXml('PElW\nUi8+'), { ok: false, error: /character "\\n"/ })
  t.match(decodeInlineXml('PElW Ui8+'), { ok: false, error: /not base64/ })
  t.match(decodeInlineXml('PElWUi8*'), { ok: false, error: /character "\*"/ })
  t.match(decodeInlineXml('PElWUi8%2B'), { ok: false, error: /character "%"/ })
  t.match(decodeInlineXml('PE=lWUi8+'), { ok: false, error: /"=" is only allowed at the end/ })
  t.match(decodeInlineXml('PElWUi8+==='), { ok: false, error: /not base64/ })
  t.match(decodeInlineXml('PElWU'), { ok: false, error: /length is impossible/ })
  t.match(decodeInlineXml('PElWUi8=='), { ok: false, error: /wrong padding/ })
  t.match(decodeInlineXml('PA=='), { ok: true })
  t.match(decodeInlineXml('PA='), { ok: false, error: /wrong padding/ })
  t.match(decodeInlineXml('PB'), { ok: false, error: /not canonical/ }) // unused bits set
  t.match(decodeInlineXml('ab+c-d__'), { ok: false, error: /mixes the standard \(\+\/\) and URL-safe \(-_\)/ })
})

t.test('must be UTF-8', async (t) => {
  t.match(decodeInlineXml(Buffer.from([0x3c, 0xff, 0xfe, 0x3e]).toString('base64')), { ok: false, error: /UTF-8/ })
  t.match(decodeInlineXml(Buffer.from([0xe3, 0x81]).toString('base64')), { ok: false, error: /UTF-8/ }) // truncated sequence
  // A UTF-8 byte order mark is dropped.
  t.same(decodeInlineXml(Buffer.from('\ufeff<IVR/>').toString('base64')), { ok: true, value: '<IVR/>' })
})

t.test('size limit', async (t) => {
  const big = Buffer.alloc(300 * 1024, 0x20).toString('base64')
  t.match(decodeInlineXml(big), { ok: false, error: /more than 262144 bytes/ })
  t.match(decodeInlineXml(Buffer.from('<IVR/>').toString('base64'), 5), { ok: false, error: /more than 5 bytes/ })
  t.match(decodeInlineXml(Buffer.from('<IVR/>').toString('base64'), 6), { ok: true })
})
