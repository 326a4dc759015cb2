/**
 * A callback_url whose host itself names a refused address is `400 invalid_parameter` at
 * request time, before anything is originated (issue 12 / README "Security"), with the rule
 * named; `callbacks.allow` (read per request, so a reload applies) lets its ranges through;
 * host names are left to delivery (they are resolved and checked then: test/net/).
 */
import t from 'tap'
import { runtimeOf } from '../../src/runtime/store.js'
import { LITERAL_FORMS } from '../net/forms.js'
import { exampleConfig, operation, startApp } from './helpers.js'

const CALL = { user_name: 'alice', destination: '0311112222' }

/** The example configuration with `callbacks.allow` set to `allow`. */
async function withAllow(allow: string[]) {
  const base = await exampleConfig()
  return runtimeOf({ ...base, daemon: { ...base.daemon, callbacks: { ...base.daemon.callbacks, allow } } })
}

t.test('every refused literal form is invalid_parameter, naming callback_url and the rule; nothing is originated', async (t) => {
  const h = await startApp()
  t.teardown(() => h.close())
  h.runtime = await withAllow([])
  const { bad } = operation(h, 'call_user')
  for (const form of LITERAL_FORMS) {
    const url = `http://${form.host}:8021/cb`
    const r = await bad(t, { ...CALL, callback_url: url }, 400, 'invalid_parameter', 'callback_url: must not name a')
    t.match(String((r.body.error as { description?: unknown }).description), /callbacks\.allow/, `${url}: the description names the allow-list`)
  }
  for (const url of ['http://localhost/cb', 'https://LOCALHOST.:8443/cb', 'http://api.localhost/cb', 'https://user:pw@[::1]/cb']) {
    await bad(t, { ...CALL, callback_url: url }, 400, 'invalid_parameter', 'callback_url')
  }
  t.equal(h.engine.plans.length, 0, 'nothing reached the engine')
})

t.test('the same rule on every operation that takes a callback_url', async (t) => {
  const h = await startApp()
  t.teardown(() => h.close())
  h.runtime = await withAllow([])
  const cb = 'http://169.254.169.254/latest/meta-data/'
  await operation(h, 'call_user').bad(t, { ...CALL, callback_url: cb }, 400, 'invalid_parameter', 'metadata')
  await operation(h, 'call_group').bad(t, { group_name: 'sales', destination: '0311112222', callback_url: cb }, 400, 'invalid_parameter', 'metadata')
  await operation(h, 'call_external').bad(t, { target: '0311112222', destination: 'alice', callback_url: cb }, 400, 'invalid_parameter', 'metadata')
})

t.test('public hosts and names pass; callbacks.allow opens exactly its ranges, at the next request', async (t) => {
  const h = await startApp()
  t.teardown(() => h.close())
  h.runtime = await withAllow([])
  const { good, bad } = operation(h, 'call_user')
  for (const url of ['https://app.example/cb', 'http://93.184.216.34/cb', 'https://[2606:4700:4700::1111]/cb', 'http://intranet.example.test/cb']) {
    t.equal((await good(t, { ...CALL, callback_url: url }))?.callbackUrl, new URL(url).href, `${url} is accepted (a name is judged at delivery)`)
  }
  await bad(t, { ...CALL, callback_url: 'http://10.1.2.3/cb' }, 400, 'invalid_parameter', 'callback_url: must not name a private address')
  h.runtime = await withAllow(['10.0.0.0/8', '127.0.0.1/32'])
  t.ok(await good(t, { ...CALL, callback_url: 'http://10.1.2.3/cb' }), 'allowed after the reload')
  t.ok(await good(t, { ...CALL, callback_url: 'http://2130706433:9/cb' }), '127.0.0.1 in another form is the same allowed host')
  t.ok(await good(t, { ...CALL, callback_url: 'http://[::ffff:127.0.0.1]/cb' }), 'and its IPv4-mapped form')
  await bad(t, { ...CALL, callback_url: 'http://127.0.0.2/cb' }, 400, 'invalid_parameter', 'loopback')
  await bad(t, { ...CALL, callback_url: 'http://localhost/cb' }, 400, 'invalid_parameter', 'localhost resolves to ::1 is loopback')
  await bad(t, { ...CALL, callback_url: 'http://169.254.169.254/cb' }, 400, 'invalid_parameter', 'metadata')
})
