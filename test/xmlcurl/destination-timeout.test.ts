/** Issue 13 D3: where the destination's ring time goes into a route (src/xmlcurl/destination-timeout.ts). */
import t from 'tap'
import { withDestinationTimeout } from '../../src/xmlcurl/destination-timeout.js'

const bridge = (data: string) => ({ app: 'bridge', data })
const ringback = { app: 'set', data: 'ringback=%(2000,4000,440,480)' }

t.test('before the bridge to a user or a PSTN number', async (t) => {
  t.same(withDestinationTimeout([ringback, bridge('user/bob@example.test')], 7), [ringback, { app: 'set', data: 'call_timeout=7' }, bridge('user/bob@example.test')])
  t.same(withDestinationTimeout([bridge('sofia/gateway/pstn/0311112222')], 30)[0], { app: 'set', data: 'call_timeout=30' })
})

t.test('not for group hunts, IVR parks, or when a call_timeout is set already (IVR Transfer answerTimeout)', async (t) => {
  const hunt = [{ app: 'set', data: 'call_timeout=15' }, bridge('[leg_timeout=15]user/carol@example.test')]
  t.same(withDestinationTimeout(hunt, 60), hunt)
  t.same(withDestinationTimeout([bridge('[leg_timeout=15]user/carol@example.test')], 60), [bridge('[leg_timeout=15]user/carol@example.test')])
  t.same(withDestinationTimeout([{ app: 'park' }], 60), [{ app: 'park' }])
  const transfer = [{ app: 'set', data: 'call_timeout=20' }, ringback, bridge('user/bob@example.test')]
  t.same(withDestinationTimeout(transfer, 60), transfer)
})
