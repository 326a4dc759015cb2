/**
 * SIP phones for the real-FreeSWITCH lane, on loopback with the npm `sip` stack: each terminal of
 * the test domain's users registers (digest auth against the daemon's directory) and then behaves
 * as its `sim.terminals` entry says, and a "carrier" behind the `pstn` gateway answers INVITEs as
 * the domain's `sim.pstn` says. The same domain file therefore drives the simulator and the real
 * switch, which is what lets the lane compare them. No media: the SDP names a UDP port that is
 * bound and drained; DTMF goes as SIP INFO (application/dtmf-relay).
 */
import { createSocket, type Socket } from 'node:dgram'
import { randomBytes } from 'node:crypto'
import * as sip from 'sip'
import { signRequest } from 'sip/digest.js'
import type { SipMessage, Stack } from 'sip'
import type { SimBehaviour } from '../../src/config/schema.js'

export interface PhoneUser {
  readonly name: string
  readonly password: string
  readonly terminals: readonly SimBehaviour[]
}

/** One call leg as a phone sees it (a dialog once answered). */
interface Dialog {
  callId: string
  localTag: string
  local: string // our address (as in From of our requests)
  remote: string // the peer's name-addr with its tag
  remoteTarget: string // where in-dialog requests go (the peer's Contact)
  cseq: number
  confirmed: boolean
  ended: boolean
  invite?: SipMessage // the INVITE we received (UAS), until answered or cancelled
  timers: NodeJS.Timeout[]
}

const tag = () => randomBytes(6).toString('hex')

function sdp(address: string, port: number): string {
  return [
    'v=0',
    `o=- ${Date.now()} 1 IN IP4 ${address}`,
    's=-',
    `c=IN IP4 ${address}`,
    't=0 0',
    `m=audio ${port} RTP/AVP 0 101`,
    'a=rtpmap:0 PCMU/8000',
    'a=rtpmap:101 telephone-event/8000',
    'a=fmtp:101 0-16',
    'a=sendrecv',
    '',
  ].join('\r\n')
}

const uriOf = (nameAddr: string) => /<([^>]+)>/.exec(nameAddr)?.[1] ?? nameAddr

/** One SIP endpoint: a UDP port, a stack, an RTP sink, and its dialogs by Call-ID. */
class Endpoint {
  readonly dialogs = new Map<string, Dialog>()
  private stack!: Stack
  private rtp!: Socket
  rtpPort = 0

  constructor(
    readonly address: string,
    readonly port: number,
    private readonly server: { host: string; port: number },
    private readonly behaviourFor: (rq: SipMessage) => SimBehaviour | undefined,
  ) {}

  async start(): Promise<void> {
    this.rtp = createSocket('udp4')
    this.rtp.on('message', () => undefined)
    await new Promise<void>((r) => this.rtp.bind(0, this.address, r))
    this.rtpPort = this.rtp.address().port
    this.stack = sip.create({ address: this.address, publicAddress: this.address, port: this.port, udp: true, tcp: false, logger: {} }, (rq) => this.onRequest(rq))
  }

  stop(): void {
    for (const d of this.dialogs.values()) for (const t of d.timers) clearTimeout(t)
    this.stack.destroy()
    this.rtp.close()
  }

  private reply(rq: SipMessage, status: number, reason: string, extra: { headers?: Record<string, unknown>; content?: string } = {}, toTag?: string): void {
    const rs = sip.makeResponse(rq, status, reason)
    if (toTag !== undefined && status > 100) rs.headers.to.params['tag'] = toTag
    Object.assign(rs.headers, extra.headers ?? {})
    if (extra.content !== undefined) rs.content = extra.content
    this.stack.send(rs)
  }

  private onRequest(rq: SipMessage): void {
    const callId = rq.headers['call-id']
    const d = this.dialogs.get(callId)
    switch (rq.method) {
      case 'OPTIONS':
        return this.reply(rq, 200, 'OK')
      case 'INVITE':
        if (d !== undefined) return this.reply(rq, 200, 'OK', { headers: { contact: [{ uri: this.contact() }], 'content-type': 'application/sdp' }, content: sdp(this.address, this.rtpPort) }, d.localTag)
        return this.incoming(rq)
      case 'ACK':
        if (d !== undefined) d.confirmed = true
        return
      case 'CANCEL': {
        this.reply(rq, 200, 'OK')
        if (d?.invite !== undefined) {
          this.reply(d.invite, 487, 'Request Terminated', {}, d.localTag)
          this.end(d)
        }
        return
      }
      case 'BYE':
        this.reply(rq, 200, 'OK')
        if (d !== undefined) this.end(d)
        return
      default:
        return this.reply(rq, 200, 'OK')
    }
  }

  private contact(user = 'phone'): string {
    return `sip:${user}@${this.address}:${this.port}`
  }

  private end(d: Dialog): void {
    d.ended = true
    for (const t of d.timers) clearTimeout(t)
    this.dialogs.delete(d.callId)
  }

  private incoming(rq: SipMessage): void {
    const b = this.behaviourFor(rq)
    const localTag = tag()
    const to = rq.headers.to
    const d: Dialog = {
      callId: rq.headers['call-id'],
      localTag,
      local: `<${to.uri}>;tag=${localTag}`,
      remote: `<${rq.headers.from.uri}>;tag=${rq.headers.from.params['tag'] ?? ''}`,
      remoteTarget: rq.headers.contact?.[0]?.uri ?? (rq.headers.from.uri),
      cseq: 1,
      confirmed: false,
      ended: false,
      invite: rq,
      timers: [],
    }
    if (b === undefined || b.behaviour === 'unregistered') return this.reply(rq, 404, 'Not Found', {}, localTag)
    if (b.behaviour === 'busy') return this.reply(rq, 486, 'Busy Here', {}, localTag)
    if (b.behaviour === 'reject') return this.reply(rq, 603, 'Decline', {}, localTag)
    this.dialogs.set(d.callId, d)
    this.reply(rq, 180, 'Ringing', { headers: { contact: [{ uri: this.contact(uriUser(to.uri)) }] } }, localTag)
    if (b.answer_after === undefined) return // no_answer: rings until cancelled
    d.timers.push(
      setTimeout(() => {
        if (d.ended) return
        d.invite = undefined
        this.reply(rq, 200, 'OK', { headers: { contact: [{ uri: this.contact(uriUser(to.uri)) }], 'content-type': 'application/sdp' }, content: sdp(this.address, this.rtpPort) }, localTag)
        if (b.hangup_after !== undefined) d.timers.push(setTimeout(() => this.bye(d.callId), b.hangup_after * 1000))
      }, b.answer_after * 1000),
    )
  }

  /** An in-dialog request from us (BYE, INFO). */
  private inDialog(d: Dialog, method: string, headers: Record<string, unknown> = {}, content?: string): Promise<SipMessage> {
    d.cseq += 1
    const rq: SipMessage = {
      method,
      uri: d.remoteTarget,
      headers: {
        to: { uri: uriOf(d.remote), params: { tag: /tag=([^;>]+)/.exec(d.remote)?.[1] } },
        from: { uri: uriOf(d.local), params: { tag: d.localTag } },
        'call-id': d.callId,
        cseq: { seq: d.cseq + 100, method },
        via: [],
        ...headers,
      },
    }
    if (content !== undefined) rq.content = content
    return new Promise((resolve) => this.stack.send(rq, (rs) => (rs.status !== undefined && rs.status >= 200 ? resolve(rs) : undefined)))
  }

  /** The far end hangs up an answered call (a BYE). */
  async bye(callId: string): Promise<boolean> {
    const d = this.dialogs.get(callId)
    if (d === undefined) return false
    this.end(d)
    await this.inDialog(d, 'BYE')
    return true
  }

  /** DTMF as SIP INFO application/dtmf-relay, one request per digit. */
  async dtmf(callId: string, digits: string): Promise<boolean> {
    const d = this.dialogs.get(callId)
    if (d === undefined) return false
    for (const digit of digits) {
      await this.inDialog(d, 'INFO', { 'content-type': 'application/dtmf-relay' }, `Signal=${digit}\r\nDuration=160\r\n`)
    }
    return true
  }

  /** Sends a request outside a dialog to the switch, answering a digest challenge once. */
  request(rq: SipMessage, creds?: { user: string; password: string }): Promise<SipMessage> {
    return new Promise((resolve) => {
      const send = (m: SipMessage, challenged: boolean) =>
        this.stack.send(m, (rs) => {
          const status = rs.status ?? 0
          if ((status === 401 || status === 407) && !challenged && creds !== undefined) {
            const again: SipMessage = { ...m, headers: { ...m.headers, via: [], cseq: { seq: m.headers.cseq.seq + 1, method: m.headers.cseq.method } } }
            signRequest(undefined, again, rs, creds)
            return send(again, true)
          }
          if (status >= 200) resolve(rs)
        })
      send(rq, false)
    })
  }

  /** A new outgoing call from this endpoint (a phone dialing, or the carrier sending a DID call). */
  async call(from: string, destination: string, creds?: { user: string; password: string }): Promise<{ callId: string; status: number }> {
    const callId = `${tag()}@${this.address}`
    const localTag = tag()
    const rq: SipMessage = {
      method: 'INVITE',
      uri: `sip:${destination}@${this.server.host}:${this.server.port}`,
      headers: {
        to: { uri: `sip:${destination}@${this.server.host}`, params: {} },
        from: { uri: from, params: { tag: localTag } },
        'call-id': callId,
        cseq: { seq: 1, method: 'INVITE' },
        contact: [{ uri: this.contact(uriUser(from)) }],
        'content-type': 'application/sdp',
        via: [],
      },
      content: sdp(this.address, this.rtpPort),
    }
    const d: Dialog = { callId, localTag, local: `<${from}>;tag=${localTag}`, remote: '', remoteTarget: '', cseq: 1, confirmed: false, ended: false, timers: [] }
    this.dialogs.set(callId, d)
    const rs = await this.request(rq, creds)
    const status = rs.status ?? 0
    if (status >= 200 && status < 300) {
      d.remote = `<${rs.headers.to.uri}>;tag=${rs.headers.to.params['tag'] ?? ''}`
      d.remoteTarget = rs.headers.contact?.[0]?.uri ?? rq.uri ?? ''
      d.confirmed = true
      this.stack.send({
        method: 'ACK',
        uri: d.remoteTarget,
        headers: { to: rs.headers.to, from: rs.headers.from, 'call-id': callId, cseq: { seq: rs.headers.cseq.seq, method: 'ACK' }, via: [] },
      })
    } else this.end(d)
    return { callId, status }
  }

  async register(user: string, domain: string, password: string, expires: number): Promise<number> {
    const rs = await this.request(
      {
        method: 'REGISTER',
        uri: `sip:${this.server.host}:${this.server.port}`,
        headers: {
          to: { uri: `sip:${user}@${domain}`, params: {} },
          from: { uri: `sip:${user}@${domain}`, params: { tag: tag() } },
          'call-id': `${tag()}@${this.address}`,
          cseq: { seq: 1, method: 'REGISTER' },
          contact: [{ uri: this.contact(user), params: { expires: String(expires) } }],
          expires: String(expires),
          via: [],
        },
      },
      { user, password },
    )
    return rs.status ?? 0
  }
}

/**
 * The phones' address: not the switch's 127.0.0.1, because the sip stack takes a request to its
 * own host name for one of its flow tokens; not the carrier's either (its address passes the
 * carriers ACL without authentication).
 */
const PHONES_ADDRESS = '127.0.0.3'

const uriUser = (uri: string) => /^sips?:([^@;]+)@/.exec(uri)?.[1] ?? 'phone'

export interface PhoneFarm {
  /** Hangs up (BYE) the answered call with this SIP Call-ID, whichever phone holds it. */
  bye(callId: string): Promise<boolean>
  dtmf(callId: string, digits: string): Promise<boolean>
  /** A registered phone of `user` dials `destination` (authenticating); resolves the final status. */
  dial(user: string, destination: string): Promise<{ callId: string; status: number }>
  /** The carrier sends a call to a DID (no authentication: its address is in the carriers ACL). */
  carrierCall(from: string, did: string): Promise<{ callId: string; status: number }>
  /** The first phone of `user` REGISTERs again (its own contact), for `expires` s (0: unregisters); resolves the status. */
  reRegister(user: string, expires: number): Promise<number>
  stop(): Promise<void>
}

/**
 * Registers every terminal of `users` (but `unregistered` ones) with the switch at `server` and
 * starts the carrier at `carrier` (its address must be the gateway's proxy and in the ACL).
 */
export async function startPhones(o: {
  domain: string
  server: { host: string; port: number }
  users: readonly PhoneUser[]
  pstn: Readonly<Record<string, SimBehaviour>>
  carrier: { address: string; port: number }
  ports: (address: string) => Promise<number>
}): Promise<PhoneFarm> {
  const endpoints: Endpoint[] = []
  const byUser = new Map<string, { ep: Endpoint; password: string }>()
  for (const u of o.users) {
    for (const [i, b] of u.terminals.entries()) {
      const ep = new Endpoint(PHONES_ADDRESS, await o.ports(PHONES_ADDRESS), o.server, () => b)
      await ep.start()
      endpoints.push(ep)
      if (b.behaviour === 'unregistered') continue
      const status = await ep.register(u.name, o.domain, u.password, 600)
      if (status !== 200) throw new Error(`REGISTER ${u.name} terminal ${i}: ${status}`)
      if (!byUser.has(u.name)) byUser.set(u.name, { ep, password: u.password })
    }
  }
  const carrier = new Endpoint(o.carrier.address, o.carrier.port, o.server, (rq) => {
    const n = uriUser(rq.uri ?? '')
    return o.pstn[n] ?? o.pstn['default'] ?? { answer_after: 1 }
  })
  await carrier.start()
  endpoints.push(carrier)
  const holder = (callId: string) => endpoints.find((e) => e.dialogs.has(callId))
  return {
    async bye(callId) {
      return (await holder(callId)?.bye(callId)) ?? false
    },
    async dtmf(callId, digits) {
      return (await holder(callId)?.dtmf(callId, digits)) ?? false
    },
    async dial(user, destination) {
      const p = byUser.get(user)
      if (p === undefined) throw new Error(`${user} has no registered phone`)
      return p.ep.call(`sip:${user}@${o.domain}`, destination, { user, password: p.password })
    },
    async carrierCall(from, did) {
      return carrier.call(`sip:${from}@${o.carrier.address}`, did)
    },
    async reRegister(user, expires) {
      const p = byUser.get(user)
      if (p === undefined) throw new Error(`${user} has no registered phone`)
      return p.ep.register(user, o.domain, p.password, expires)
    },
    async stop() {
      for (const ep of endpoints) ep.stop()
    },
  }
}
