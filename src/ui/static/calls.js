/**
 * The live calls page's model (docs/ui.md): the domain's channels as the CTI connection reports
 * them (docs/cti.md "Messages from the daemon"), and the text of each table cell. No DOM here,
 * so the rules can be tested without a browser (test/ui/calls.test.ts); table.js draws the rows.
 *
 * Every info_event carries the whole channel: it replaces what is held (never merged).
 */

/** @typedef {{ uuid: string, direction: string | null, peer_location: string, calling_name: string | null,
 *   calling_number: string | null, called_number: string | null, offer_at: number, answer_at: number | null,
 *   hangup_at: number | null, other_uuid: string | null, user_id: string | null, state: string,
 *   end_user: Record<string, string> | null, recording?: boolean }} Channel */

/** @typedef {{ uuid: string, who: string, user: string, endUser: string, direction: string, state: string,
 *   recording: boolean, duration: string, peer: string, commandable: boolean }} Row */

const NONE = '—'

/**
 * @param {boolean} controls whether the page offers hangup and transfer on the legs (not "Watch
 *   only"). The page's choice, not the connection's: the CTI connection is read-only in every
 *   mode, and the buttons use the HTTP control (docs/ui.md "How it connects").
 */
export function createCalls(controls = false) {
  return {
    /** @type {string | null} */ domain: null,
    /** @type {number | null} */ limit: null,
    controls,
    /** @type {Map<string, Channel>} */ channels: new Map(),
    seq: 0,
  }
}

/**
 * Applies one message of the connection. Returns what changed, for the page's announcements:
 * `snapshot`, `added`, `updated`, `removed` (with the channel), `system` (with the event and its
 * description), or `ignored`.
 */
export function applyMessage(calls, msg) {
  if (msg === null || typeof msg !== 'object') return { kind: 'ignored' }
  switch (msg.type) {
    case 'initial_info': {
      calls.channels.clear()
      calls.domain = typeof msg.connection?.domain === 'string' ? msg.connection.domain : null
      calls.limit = typeof msg.connection?.channel_limit === 'number' ? msg.connection.channel_limit : null
      calls.seq = 0
      for (const ch of Array.isArray(msg.channels) ? msg.channels : []) if (isChannel(ch)) calls.channels.set(ch.uuid, ch)
      return { kind: 'snapshot' }
    }
    case 'info_event': {
      const ch = msg.channel
      if (!isChannel(ch)) return { kind: 'ignored' }
      if (typeof msg.seq === 'number') calls.seq = msg.seq
      if (msg.event === 'removed') {
        calls.channels.delete(ch.uuid)
        return { kind: 'removed', channel: ch }
      }
      const known = calls.channels.has(ch.uuid)
      calls.channels.set(ch.uuid, ch)
      return { kind: known ? 'updated' : 'added', channel: ch }
    }
    case 'system':
      return { kind: 'system', event: String(msg.event), description: String(msg.description ?? '') }
    default:
      return { kind: 'ignored' }
  }
}

const isChannel = (ch) => ch !== null && typeof ch === 'object' && typeof ch.uuid === 'string' && typeof ch.state === 'string'

/** Channels that count against the domain's channel_limit: those not hung up (docs/cti.md). */
export function liveCount(calls) {
  let n = 0
  for (const ch of calls.channels.values()) if (ch.state !== 'hangup') n += 1
  return n
}

/** Who is on this leg: the number or SIP user it calls (outbound) or that calls (inbound). */
export function whoOf(ch) {
  const first = ch.direction === 'inbound' ? [ch.calling_number, ch.calling_name, ch.called_number] : [ch.called_number, ch.calling_number]
  for (const v of first) if (typeof v === 'string' && v !== '') return v
  return NONE
}

/** @internal Exported for tests: test/ui checks the page model without a browser. */
export function endUserText(endUser) {
  if (endUser === null || typeof endUser !== 'object') return NONE
  const name = typeof endUser.name === 'string' ? endUser.name : ''
  const org = typeof endUser.organization === 'string' ? endUser.organization : ''
  if (name !== '' && org !== '') return `${name} (${org})`
  if (name !== '' || org !== '') return name || org
  return typeof endUser.id === 'string' && endUser.id !== '' ? endUser.id : NONE
}

/** The other party: the leg this one is bridged (or being connected) to, either way round. */
function peerOf(ch, channels) {
  let other = ch.other_uuid === null ? undefined : channels.get(ch.other_uuid)
  if (other === undefined) for (const c of channels.values()) if (c.other_uuid === ch.uuid) other = c
  if (other !== undefined) return whoOf(other)
  if (ch.other_uuid !== null) return 'another channel'
  return ch.peer_location === 'external' ? 'PSTN' : NONE
}

/**
 * Time since the answer (or, not answered yet, since the offer), as m:ss or h:mm:ss.
 * @internal Exported for tests: test/ui checks the page model without a browser.
 */
export function durationText(ch, nowMs) {
  const since = ch.answer_at ?? ch.offer_at
  const end = ch.hangup_at ?? nowMs
  const s = Math.max(0, Math.floor((end - since) / 1000))
  const hh = Math.floor(s / 3600)
  const mm = Math.floor((s % 3600) / 60)
  const ss = String(s % 60).padStart(2, '0')
  return hh > 0 ? `${hh}:${String(mm).padStart(2, '0')}:${ss}` : `${mm}:${ss}`
}

/** The table's rows, oldest call first. */
export function rowsOf(calls, nowMs) {
  const list = [...calls.channels.values()].sort((a, b) => a.offer_at - b.offer_at || (a.uuid < b.uuid ? -1 : 1))
  return list.map((ch) => ({
    uuid: ch.uuid,
    who: whoOf(ch),
    user: ch.user_id === null ? '' : `user ${ch.user_id}`,
    endUser: endUserText(ch.end_user),
    direction: ch.direction ?? NONE,
    state: ch.state,
    recording: ch.recording === true,
    duration: durationText(ch, nowMs),
    peer: peerOf(ch, calls.channels),
    commandable: calls.controls && ch.state !== 'hangup',
  }))
}
