/** The ticket store on its own: single use, expiry, and memory bounded by the TTL. */
import t from 'tap'
import { TicketStore } from '../../src/cti/tickets.js'

t.test('single use, exact URI, expiry', async (t) => {
  let now = 1_000_000
  const store = new TicketStore(() => now)
  const a = store.issue('example.test', '/api/ws_cti?app_name=x&user_id=1', 10_000)
  t.not(a, store.issue('example.test', '/api/ws_cti?app_name=x&user_id=1', 10_000), 'tickets are random')
  t.same(store.redeem(a, '/api/ws_cti?app_name=x&user_id=1'), { ok: true, value: 'example.test' })
  t.same(store.redeem(a, '/api/ws_cti?app_name=x&user_id=1'), { ok: false, error: 'unknown' }, 'used')
  const b = store.issue('example.test', '/u', 10_000)
  t.same(store.redeem(b, '/v'), { ok: false, error: 'wrong_uri' })
  t.same(store.redeem(b, '/u'), { ok: false, error: 'unknown' }, 'consumed by the wrong attempt')
  const c = store.issue('example.test', '/u', 10_000)
  now += 10_000
  t.same(store.redeem(c, '/u'), { ok: false, error: 'expired' }, 'expired at exactly the TTL')
})

t.test('unredeemed tickets cost memory for one TTL only', async (t) => {
  let now = 0
  const store = new TicketStore(() => now)
  for (let i = 0; i < 100; i++) store.issue('example.test', '/u', 1000)
  t.equal(store.size, 100)
  now = 1000
  store.issue('example.test', '/u', 1000)
  t.equal(store.size, 1, 'issuing drops the expired ones')
  // A shorter TTL after a reload: the head-only drop stops early, the periodic sweep catches up.
  store.issue('example.test', '/u', 10)
  now = 1500
  store.sweep()
  t.equal(store.size, 1)
  store.clear()
  t.equal(store.size, 0)
})
