/**
 * The end-to-end scenarios of the simulator lane (test/e2e/), written once against the World
 * interface so that the real-FreeSWITCH lane runs each on both switches and compares the traces.
 * Scenarios wait on observed events (never on sleeps), so they hold on the sped-up simulator and
 * on the real switch alike; every call is ended by its far end and the switch is idle at the end.
 */
import type { RecordedEvent } from './esl-tap.js'
import { ctiLines, legLines, legNames, scrub, statusLines, statusProblems, type StatusEventBody, type Trace } from './trace.js'
import { waitUntil, type AppServer, type World } from './world.js'

export interface Ctx {
  readonly w: World
  readonly app: AppServer
  post(operation: string, body: Record<string, unknown>): Promise<{ status: number; body: Record<string, unknown> }>
  /** The first event since the scenario began that matches. */
  event(what: string, match: (e: RecordedEvent) => boolean, timeoutMs?: number): Promise<RecordedEvent>
  /** The n-th callback (1-based) of this scenario. */
  callback(n?: number): Promise<{ result_code: number; uuid?: string; error?: { id: string; cause?: string } }>
  cti(query: string): Promise<void>
  note(key: string, value: unknown): void
}

export interface Scenario {
  readonly name: string
  run(c: Ctx): Promise<void>
}

const bridgedA = (uuid: string) => (e: RecordedEvent) => e.name === 'CHANNEL_BRIDGE' && (e.headers['Bridge-A-Unique-ID'] === uuid || e.headers['Unique-ID'] === uuid)
const b64 = (s: string) => Buffer.from(s).toString('base64')

/**
 * Placing a call that connects; the far end of the answered leg hangs up once it is bridged.
 * initiate_call has no callback_url (docs/api.md): its answered leg is the one of its reply's
 * UUIDs that gets bridged.
 */
async function connectAndHangUp(c: Ctx, operation: string, body: Record<string, unknown>): Promise<void> {
  const withCallback = operation !== 'initiate_call'
  const r = await c.post(operation, withCallback ? { ...body, callback_url: c.w.callbackUrl } : body)
  if (r.status !== 200) return
  let answered: string | undefined
  if (withCallback) answered = (await c.callback()).uuid
  else {
    const uuids = (r.body['uuids'] as string[] | undefined) ?? []
    const bridge = await c.event('the bridge', (e) => uuids.some((u) => bridgedA(u)(e)))
    answered = uuids.find((u) => bridgedA(u)(bridge))
  }
  if (answered === undefined) return
  await c.event('the bridge', bridgedA(answered))
  await c.w.remoteHangup(answered)
}

export const scenarios: Scenario[] = [
  {
    name: 'call_user alice (two terminals: one answers, the other loses the race) connected to bob',
    run: (c) => connectAndHangUp(c, 'call_user', { user_name: 'alice', destination: 'bob' }),
  },
  {
    name: 'call_user with auto_answer: the headers go to the user\'s legs, not to bob\'s',
    run: (c) => connectAndHangUp(c, 'call_user', { user_name: 'alice', destination: 'bob', auto_answer: true }),
  },
  {
    name: 'no answer: a PSTN target rings past answer_timeout',
    run: async (c) => {
      await c.post('call_external', { target: '0322223333', destination: 'bob', answer_timeout: 2, callback_url: c.w.callbackUrl })
      await c.callback()
    },
  },
  {
    name: 'busy: carol\'s terminal answers 486',
    run: async (c) => {
      await c.post('call_user', { user_name: 'carol', destination: 'bob', callback_url: c.w.callbackUrl })
      await c.callback()
    },
  },
  {
    name: 'rejected: a PSTN target answers 603',
    run: async (c) => {
      await c.post('call_external', { target: '0333334444', destination: 'bob', callback_url: c.w.callbackUrl })
      await c.callback()
    },
  },
  {
    name: 'unregistered: dave has no terminal, nothing is originated',
    run: async (c) => {
      await c.post('call_user', { user_name: 'dave', destination: 'bob', callback_url: c.w.callbackUrl })
    },
  },
  {
    name: 'call_group sales: carol busy, alice answers, connected to bob',
    run: (c) => connectAndHangUp(c, 'call_group', { group_name: 'sales', destination: 'bob' }),
  },
  ...(['bob', '0501231002', 'support', '2001'] as const).map(
    (destination): Scenario => ({
      name: `call_external to ${destination}`,
      run: (c) => connectAndHangUp(c, 'call_external', { target: '0399990000', destination }),
    }),
  ),
  {
    name: 'call_external to an extension bound to an IVR URL the daemon may not fetch',
    run: async (c) => {
      await c.post('call_external', { target: '0399990000', destination: '3001', callback_url: c.w.callbackUrl })
      await c.callback()
      await c.event('the target leg hung up', (e) => e.name === 'CHANNEL_HANGUP')
    },
  },
  {
    name: 'call_external refuses a PSTN destination',
    run: async (c) => {
      await c.post('call_external', { target: '0399990000', destination: '0399998888' })
    },
  },
  {
    name: 'call_user bob to a PSTN number through the gateway, presenting a calling number',
    run: (c) => connectAndHangUp(c, 'call_user', { user_name: 'bob', destination: { called_number: '0399998888', calling_number: '0501230001' } }),
  },
  {
    name: 'CTI: bob\'s panel follows a call_external with end_user',
    run: async (c) => {
      await c.cti('app_name=panel&user_name=bob')
      const endUser = { id: 'c-42', name: 'Jane Doe', organization: 'ACME, Inc.' }
      await connectAndHangUp(c, 'call_external', { target: { called_number: '0399990000', end_user: endUser }, destination: 'bob' })
    },
  },
  {
    name: 'inline IVR: GetDigits playing an http URL (mod_http_cache), the caller presses 1, Transfer to bob',
    run: async (c) => {
      const doc = `<Response><GetDigits action="${c.app.base}/digits" numDigits="1" timeout="8"><Play>${c.app.base}/prompt.wav</Play></GetDigits></Response>`
      c.app.documents['/digits'] = '<Response><Transfer>bob</Transfer></Response>'
      const hits = c.app.hits.length
      await connectAndHangUp(c, 'call_external', { target: '0355556666', destination: `xml_url:inline_xml://${b64(doc)}` })
      const hit = c.app.hits.slice(hits).find((h) => h.path === '/digits')
      c.note('digits', hit?.form.get('Digits'))
    },
  },
  {
    name: 'inline IVR: Speak inside GetDigits, the caller presses 1, Transfer to bob',
    run: async (c) => {
      const doc = `<Response><GetDigits action="${c.app.base}/digits" numDigits="1" timeout="8"><Speak>Press 1 for Bob</Speak></GetDigits></Response>`
      c.app.documents['/digits'] = '<Response><Transfer>bob</Transfer></Response>'
      const hits = c.app.hits.length
      const r = await c.post('call_external', { target: '0355556666', destination: `xml_url:inline_xml://${b64(doc)}`, callback_url: c.w.callbackUrl })
      if (r.status !== 200) return
      const cb = await c.callback()
      // Either the caller reaches bob (then the far end hangs up) or the IVR ends the call.
      const end = await c.event('bob bridged or the call ended', (e) => (cb.uuid !== undefined && bridgedA(cb.uuid)(e)) || (e.name === 'CHANNEL_HANGUP' && e.headers['Unique-ID'] === cb.uuid))
      if (end.name === 'CHANNEL_BRIDGE' && cb.uuid !== undefined) await c.w.remoteHangup(cb.uuid)
      const hit = c.app.hits.slice(hits).find((h) => h.path === '/digits')
      c.note('digits', hit?.form.get('Digits'))
    },
  },
  {
    name: 'a phone dials an extension bound to an IVR URL (Speak, Hangup)',
    run: async (c) => {
      c.app.documents['/ext'] = '<Response><Speak>Welcome</Speak><Hangup/></Response>'
      const hits = c.app.hits.length
      await c.w.dial('alice', '3002')
      await c.event('the IVR hangs up', (e) => e.name === 'CHANNEL_HANGUP')
      const hit = c.app.hits.slice(hits).find((h) => h.path === '/ext')
      c.note('ivr request', { direction: hit?.form.get('Direction'), status: hit?.form.get('CallStatus') })
    },
  },
  {
    name: 'initiate_call pstn_number with ani and group_name, connected to bob',
    run: (c) => connectAndHangUp(c, 'initiate_call', { pstn_number: '0399990001', destination: 'bob', ani: '0501230000', group_name: 'sales' }),
  },
  {
    name: 'initiate_call user_name bob, connected to a PSTN number',
    run: (c) => connectAndHangUp(c, 'initiate_call', { user_name: 'bob', destination: '0399998888' }),
  },
  {
    name: 'D3: a destination user that never answers rings destination_timeout, then both legs end',
    run: async (c) => {
      await c.post('call_external', { target: '0399990000', destination: 'erin', callback_url: c.w.callbackUrl })
      const cb = await c.callback()
      await c.event('the target leg hung up', (e) => e.name === 'CHANNEL_HANGUP' && e.headers['Unique-ID'] === cb.uuid)
    },
  },
  {
    name: 'D3: a PSTN destination that never answers rings destination_timeout, then both legs end',
    run: async (c) => {
      await c.post('call_user', { user_name: 'bob', destination: '0322223333', callback_url: c.w.callbackUrl })
      const cb = await c.callback()
      await c.event('bob\'s leg hung up', (e) => e.name === 'CHANNEL_HANGUP' && e.headers['Unique-ID'] === cb.uuid)
    },
  },
  {
    name: 'channel limit: a call between phones counts; the API is refused beyond the limit',
    run: async (c) => {
      await c.w.dial('alice', '1002')
      const bridge = await c.event('the phones\' call bridged', (e) => e.name === 'CHANNEL_BRIDGE')
      // The daemon learns of the channels from the same events; give its tracker a moment.
      await new Promise((r) => setTimeout(r, 300))
      // A request reserves its originating legs and its destination's (docs/engine.md): limit 4.
      await c.post('call_user', { user_name: 'alice', destination: 'bob' }) // 2 live + 2 terminals + bob's 1 > 4
      await c.post('call_user', { user_name: 'carol', destination: 'bob', callback_url: c.w.callbackUrl }) // 2 + 1 + 1: allowed
      await c.callback()
      await c.w.remoteHangup(bridge.headers['Bridge-A-Unique-ID'] ?? bridge.headers['Unique-ID'] ?? '')
    },
  },
]

/** The operations that place calls: each request of a scenario asks for its status events (issue 29 item 6). */
const PLACING = new Set(['call_user', 'call_group', 'call_external', 'initiate_call'])

/** Runs one scenario in one world and returns its normalised trace. */
export async function runScenario(w: World, app: AppServer, s: Scenario): Promise<Trace> {
  const firstEvent = w.tap.events.length
  const firstCallback = w.callbacks.length
  const results = () => w.callbacks.slice(firstCallback).filter((cb) => cb.path === '/cb')
  const statusEvents = () => w.callbacks.slice(firstCallback).filter((cb) => cb.path === '/status').map((cb) => cb.body as StatusEventBody)
  const replies: Array<{ status: number; body: unknown }> = []
  const notes: Record<string, unknown> = {}
  const subscriptions: Array<{ messages: unknown[]; close(): void }> = []
  const since = () => w.tap.events.slice(firstEvent)
  const c: Ctx = {
    w,
    app,
    async post(operation, body) {
      const r = await w.post(operation, PLACING.has(operation) && !('status_callback_url' in body) ? { ...body, status_callback_url: w.statusUrl } : body)
      replies.push({ status: r.status, body: r.body })
      return r
    },
    event: (what, match, timeoutMs = 20_000) => waitUntil(what, () => since().find(match), timeoutMs),
    async callback(n = 1) {
      const cb = await waitUntil(`callback ${n}`, () => results()[n - 1], 20_000)
      return cb.body as Awaited<ReturnType<Ctx['callback']>>
    },
    async cti(query) {
      subscriptions.push(await w.cti(query))
    },
    note(key, value) {
      notes[key] = value
    },
  }
  try {
    await s.run(c)
    await w.idle(20_000)
    // Late messages (callbacks of ended calls, CTI removals) settle; every leg that told a status
    // event tells its `completed` (statusProblems says so if one never does).
    await new Promise((r) => setTimeout(r, 300))
    const allCompleted = () => {
      const said = statusEvents()
      return new Set(said.map((e) => e.uuid)).size === said.filter((e) => e.event === 'completed').length
    }
    await waitUntil('every leg\'s completed status event', () => allCompleted() || undefined, 5_000).catch(() => undefined)
  } finally {
    for (const sub of subscriptions) sub.close()
  }
  const events = since()
  const names = legNames(events)
  return {
    replies: replies.map((r) => scrub(r, names)),
    callbacks: results().map((cb) => scrub(cb.body, names)),
    cti: subscriptions.flatMap((sub) => ctiLines(sub.messages, names)),
    legs: legLines(events),
    notes,
    status: statusLines(statusEvents(), names),
    statusProblems: statusProblems(statusEvents(), events),
  }
}
