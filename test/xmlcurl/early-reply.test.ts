/**
 * The xml_curl listener, like the API's (test/api/early-reply.test.ts): after a reply sent before
 * the form was all read (413 over MAX_FORM_BYTES, 401 before the body), the next fetch of the
 * same client (one pooled connection, as libcurl keeps) is answered at once. Here that holds
 * because the listener's readBody drains what it refused (exchange.ts) and Node drains a body
 * nobody read; this test keeps it so.
 */
import t from 'tap'
import { Agent, fetch } from 'undici'
import { MAX_FORM_BYTES } from '../../src/xmlcurl/exchange.js'
import { startTestDaemon } from '../support/daemon.js'
import { fixture } from './helpers.js'

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`
const XML_OK = basic('freeswitch', 'change-me-xml-curl')
const FORM = { 'content-type': 'application/x-www-form-urlencoded' }
const REGISTER_ALICE = fixture('01-sip-auth-register', { user: 'alice', sip_auth_username: 'alice' }).toString()
const PROMPT_MS = 2000

t.test('after an early reply, the next fetch on the same connection is answered at once', async (t) => {
  const d = await startTestDaemon(t, { simulatorPort: 0, simulatorTimeScale: 0.05, waitLink: false })
  const url = d.xmlCurlUrl
  // Far more than the socket buffers hold: the reply comes while the client is still sending.
  const big = `${REGISTER_ALICE}&pad=${'x'.repeat(4 * MAX_FORM_BYTES)}`
  const cases = [
    { name: '413 (a form over the limit, sent chunked)', status: 413, headers: { ...FORM, authorization: XML_OK }, chunked: true },
    { name: '401 (no credentials: the form is never read)', status: 401, headers: FORM, chunked: false },
  ]
  for (const c of cases) {
    const dispatcher = new Agent({ connections: 1, pipelining: 1 })
    t.teardown(() => dispatcher.close())
    const body = c.chunked
      ? new ReadableStream<Uint8Array>({
          start(ctl) {
            ctl.enqueue(new TextEncoder().encode(big.slice(0, 1000)))
            ctl.enqueue(new TextEncoder().encode(big.slice(1000)))
            ctl.close()
          },
        })
      : big
    const early = await fetch(url, { method: 'POST', headers: c.headers, body, dispatcher, ...(c.chunked ? { duplex: 'half' } : {}) })
    await early.arrayBuffer()
    t.equal(early.status, c.status, c.name)
    const start = Date.now()
    const next = await fetch(url, { method: 'POST', headers: { ...FORM, authorization: XML_OK }, body: REGISTER_ALICE, dispatcher })
    await next.arrayBuffer()
    t.equal(next.status, 200, `${c.name}: the next fetch is answered`)
    t.ok(Date.now() - start < PROMPT_MS, `${c.name}: at once (${Date.now() - start} ms)`)
  }
})
