/**
 * One scene shared by the policy and peers suites: alice's call_external (legs A and B) and a
 * phone call of alice's (PHONE) bridged to bob's parked leg (BOB), on the CTI path WS.
 */
import { DOMAIN_A } from './helpers.js'
import type { CallExternal } from './fixtures.js'

export const WS = '/api/ws_cti'
export const A = '5b65cbfb-8a4b-4053-a7ea-ac0c205fdc6f'
export const B = '0b6a2c1e-4a5f-4d0e-9c8b-1f2e3d4c5b6a'
export const PHONE = '7d1f0c2e-1111-4222-8333-444455556666'
export const BOB = '7d1f0c2e-9999-4222-8333-444455556666'
export const call: CallExternal = { a: A, b: B, domain: DOMAIN_A, userId: '1', sipUser: 'alice', requestId: 'req-ext-1', endUser: { id: 'c-1', name: 'Jane' } }
