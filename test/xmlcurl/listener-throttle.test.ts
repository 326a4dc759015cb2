/**
 * The xml_curl listener's own failed-authentication throttle (src/daemon.ts, src/api/throttle.ts;
 * docs/api.md "Throttled authentication"): the same `http.auth_throttle` settings as the API
 * listener but its own counts, so that a local client guessing API tokens (FreeSWITCH is on
 * loopback too) does not lock FreeSWITCH out of its directory and dialplan, and wrong xml_curl
 * credentials are throttled there all the same (429 with Retry-After before any comparison).
 * Clients are told apart by their source address: Linux routes all of 127.0.0.0/8 to loopback.
 */
import { request } from 'node:http'
import t from 'tap'
import { startTestDaemon } from '../support/daemon.js'
import { fixture } from './helpers.js'

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`
const API_OK = basic('example.test', 'demo-token-example-test')
const API_WRONG = basic('example.test', 'not-the-token-of-example-test')
const XML_OK = basic('freeswitch', 'change-me-xml-curl')
const XML_WRONG = basic('freeswitch', 'not-the-xml-curl-password')
const REGISTER_ALICE = fixture('01-sip-auth-register', { user: 'alice', sip_auth_username: 'alice' }).toString()

interface Reply {
  readonly status: number
  readonly retryAfter: string | undefined
  readonly body: string
}

const send = (port: number, from: string, path: string, headers: Record<string, string>, body: string): Promise<Reply> =>
  new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: 'POST', path, headers, localAddress: from, agent: false }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (c: string) => (text += c))
      res.on('end', () => {
        const ra = res.headers['retry-after']
        resolve({ status: res.statusCode ?? 0, retryAfter: typeof ra === 'string' ? ra : undefined, body: text })
      })
    })
    req.on('error', reject)
    req.end(body)
  })

t.test('API guessing does not lock FreeSWITCH out; xml_curl guessing is throttled on its own listener', async (t) => {
  // The shipped file: http.auth_throttle defaults (10 failures in a minute).
  const d = await startTestDaemon(t, { simulatorPort: 0, simulatorTimeScale: 0.05, waitLink: false })
  const api = (from: string, auth: string) => send(d.httpPort, from, '/api/call_user', { authorization: auth, 'content-type': 'application/json' }, '{}')
  const xmlCurl = (from: string, auth: string) =>
    send(d.xmlCurlPort, from, '/freeswitch/xml_curl', { authorization: auth, 'content-type': 'application/x-www-form-urlencoded' }, REGISTER_ALICE)

  // One local client guesses API tokens until the API listener blocks it.
  const guesser = '127.0.0.2'
  for (let i = 0; i < 10; i++) t.equal((await api(guesser, API_WRONG)).status, 401, `API failure ${i + 1}`)
  t.equal((await api(guesser, API_OK)).status, 429, 'the API listener now refuses it, valid token or not')
  const fromGuesser = await xmlCurl(guesser, XML_OK)
  t.equal(fromGuesser.status, 200, 'the xml_curl listener still serves the same address: its counts are its own')
  t.match(fromGuesser.body, /<user id="alice"/)

  // Wrong xml_curl credentials from another address: throttled on the xml_curl listener.
  const prober = '127.0.0.3'
  for (let i = 0; i < 10; i++) t.equal((await xmlCurl(prober, XML_WRONG)).status, 401, `xml_curl failure ${i + 1}`)
  const blocked = await xmlCurl(prober, XML_OK)
  t.equal(blocked.status, 429, 'blocked on xml_curl, before the (right) password is compared')
  t.ok(Number(blocked.retryAfter) >= 1 && Number(blocked.retryAfter) <= 60, `Retry-After ${String(blocked.retryAfter)}`)
  t.equal((JSON.parse(blocked.body) as { error: { id: string } }).error.id, 'too_many_requests')
  t.notMatch(blocked.body, /alice/, 'no document')
  t.equal((await api(prober, API_OK)).status, 400, 'the API listener does not hold its xml_curl failures against it (the empty body reaches validation)')
  const fs = await xmlCurl('127.0.0.1', XML_OK)
  t.equal(fs.status, 200, 'FreeSWITCH itself (127.0.0.1) is not slowed')
})
