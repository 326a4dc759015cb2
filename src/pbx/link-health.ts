/**
 * Is the Event Socket link to FreeSWITCH usable right now? The judgement alone, with no socket,
 * no timer and no clock of its own (the connection, src/pbx/connection.ts, feeds it; tests feed
 * it fake times), so that its rules can be read and tested in one place:
 *
 * - Traffic proves liveness: any byte from FreeSWITCH (event, reply) resets the silence.
 * - On an idle link (nothing heard for `idleProbeMs`, nothing of ours awaiting a reply) the
 *   connection sends a cheap probe; a command of ours awaiting its reply probes just as well.
 * - The link is QUIET (dead) when nothing was heard for `quietAfterMs` of *responsive* time while
 *   something of ours awaits a reply. Time the daemon itself was blocked does not count: each
 *   tick credits at most the time a responsive event loop takes between ticks, and a tick that
 *   comes late (the loop was blocked) credits nothing and judges nothing, because FreeSWITCH's
 *   bytes may be waiting, unread, behind the block. So a saturated daemon, or a saturated but
 *   live FreeSWITCH that keeps sending, is never declared dead (issue 11, item 7).
 * - A closed socket is down at once; so is a shutdown notice (the SHUTDOWN event or the
 *   `text/disconnect-notice`, test/fixtures/freeswitch/esl/26-fsctl-shutdown.txt) until a new
 *   socket has authenticated.
 * - Bytes heard again on the same socket (FreeSWITCH was frozen and resumed) make a quiet link
 *   up again: it is the same FreeSWITCH, and it answers.
 */

export interface LinkHealthOptions {
  /** Silence after which an idle link is probed. */
  readonly idleProbeMs: number
  /** Responsive silence, with a reply awaited, after which the link is quiet (dead). */
  readonly quietAfterMs: number
  /** A tick later than this after the previous one means the daemon was blocked: it credits nothing. */
  readonly maxTickGapMs: number
}

export const DEFAULT_LINK_HEALTH: LinkHealthOptions = { idleProbeMs: 250, quietAfterMs: 800, maxTickGapMs: 250 }

/**
 * - `connecting`: no socket, or a socket not yet authenticated and subscribed;
 * - `up`: authenticated, and FreeSWITCH answers;
 * - `quiet`: the socket is open but FreeSWITCH has not answered (frozen, overloaded to death);
 * - `shutting_down`: FreeSWITCH said it is shutting down; nothing more is sent on this socket.
 */
export type LinkState = 'connecting' | 'up' | 'quiet' | 'shutting_down'

/** What the connection should do after a tick. */
export interface TickAdvice {
  /** Send a probe now (the link is idle and nothing of ours awaits a reply). */
  readonly probe: boolean
  /** The link has just become quiet: withdraw what is not written yet, refuse new commands. */
  readonly becameQuiet: boolean
}

export class LinkHealth {
  private linkState: LinkState = 'connecting'
  private silenceMs = 0
  private lastTickAt: number | undefined
  private heardSinceTick = false

  constructor(private readonly opts: LinkHealthOptions = DEFAULT_LINK_HEALTH) {}

  get state(): LinkState {
    return this.linkState
  }

  /** Commands may be sent. */
  get usable(): boolean {
    return this.linkState === 'up'
  }

  /** Responsive silence so far (for logs and tests). */
  get silence(): number {
    return this.silenceMs
  }

  /** A new TCP socket: not usable until it has authenticated (authenticated()). */
  socketOpened(): void {
    this.linkState = 'connecting'
    this.silenceMs = 0
    this.heardSinceTick = false
  }

  /** A probe's reply on a new socket: authenticated and subscribed (the connection queues those first). */
  authenticated(): void {
    if (this.linkState === 'connecting') this.linkState = 'up'
  }

  socketClosed(): void {
    this.linkState = 'connecting'
    this.silenceMs = 0
  }

  /** The SHUTDOWN event or the disconnect notice: down until a new socket authenticates. */
  shutdownNotice(): void {
    this.linkState = 'shutting_down'
  }

  /** Bytes arrived from FreeSWITCH. */
  heard(): void {
    this.heardSinceTick = true
    this.silenceMs = 0
    if (this.linkState === 'quiet') this.linkState = 'up'
  }

  /**
   * The periodic judgement. `awaitingReply`: a probe or command of ours was written and its
   * reply has not come.
   */
  tick(now: number, awaitingReply: boolean): TickAdvice {
    const gap = this.lastTickAt === undefined ? 0 : now - this.lastTickAt
    this.lastTickAt = now
    const heard = this.heardSinceTick
    this.heardSinceTick = false
    if (heard) this.silenceMs = 0
    // Late tick: the loop was blocked; what FreeSWITCH sent meanwhile may still be unread.
    else if (gap > this.opts.maxTickGapMs) return { probe: false, becameQuiet: false }
    else this.silenceMs += gap
    if (this.linkState !== 'up') return { probe: false, becameQuiet: false }
    if (awaitingReply && this.silenceMs >= this.opts.quietAfterMs) {
      this.linkState = 'quiet'
      return { probe: false, becameQuiet: true }
    }
    return { probe: !awaitingReply && this.silenceMs >= this.opts.idleProbeMs, becameQuiet: false }
  }
}
