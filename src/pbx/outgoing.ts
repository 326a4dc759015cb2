/**
 * One command of ours on its way to FreeSWITCH, written at most once, never after we gave up
 * on it. This is what makes "an error reply means no call" hold at the wire (docs/design.md,
 * "An error reply means no call"):
 *
 * - `queued` → `written` when esl-lite writes it (it reads `buf` at that moment,
 *   src/pbx/esl-internals.ts);
 * - `queued` → `withdrawn` when we give up before it was written (the link went quiet or
 *   closed, FreeSWITCH announced its shutdown, the wait was too long): the caller is told
 *   `disconnected`/`timeout`, and when esl-lite's turn comes it writes a harmless command
 *   instead (NOOP_COMMAND), so the command never reaches FreeSWITCH;
 * - `written` → `answered` with its command/reply;
 * - `written` → `unconfirmed` when its socket closed, or its reply is overdue: it may run, so
 *   the caller must not answer an error for it. Should esl-lite re-queue it on a new socket,
 *   it is written as the harmless command: never twice.
 */

import type { EslReply } from './esl-internals.js'

/**
 * What a withdrawn (or already written) command turns into: re-subscribing to an event the
 * connection is subscribed to anyway. FreeSWITCH answers it at once on the listener's own
 * thread with `+OK event listener enabled json` (test/fixtures/freeswitch/esl/01-session-basics.txt)
 * and nothing else changes. The idle-link probe is the same command.
 */
export const NOOP_COMMAND = 'event json BACKGROUND_JOB'
const NOOP_BUF = Buffer.from(`${NOOP_COMMAND}\n\n`)

/** Why a command ended without FreeSWITCH answering it. */
export type Unanswered =
  /** Never written: FreeSWITCH never saw it. */
  | { readonly kind: 'withdrawn'; readonly why: 'disconnected' | 'timeout' }
  /** Written, reply lost or overdue: it may have run. */
  | { readonly kind: 'unconfirmed' }

export type OutgoingOutcome =
  | {
      readonly kind: 'answered'
      /** The command/reply's Reply-Text. */
      readonly replyText: string
      /** Its body: the output of an `api` command (esl-framing.ts), empty for any other. */
      readonly body: Buffer
    }
  | Unanswered

const NO_BODY = Buffer.alloc(0)

type State = 'queued' | 'written' | 'done'

export class Outgoing {
  private state: State = 'queued'
  /** The socket generation it was written on. */
  private writtenOn = 0
  /** The next reply esl-lite hands this item belongs to the real command (not a no-op). */
  private realReplyExpected = false
  private settle!: (o: OutgoingOutcome) => void
  readonly outcome: Promise<OutgoingOutcome> = new Promise((r) => (this.settle = r))
  readonly queued = performance.now()

  /**
   * @param text the command with its headers, without the final blank line
   * @param generation the current socket generation, read when esl-lite writes it
   * @param canWrite whether the link may carry it at that moment (else it is withdrawn then)
   * @param onWritten told once, when the real command is written
   */
  constructor(
    private readonly text: string,
    private readonly generation: () => number,
    private readonly canWrite: () => boolean,
    private readonly onWritten: (o: Outgoing) => void = () => {},
  ) {}

  get isWritten(): boolean {
    return this.state === 'written'
  }

  get isQueued(): boolean {
    return this.state === 'queued'
  }

  get socketGeneration(): number {
    return this.writtenOn
  }

  /** esl-lite reads this when it writes the item. */
  get buf(): Buffer {
    if (this.state === 'queued' && this.canWrite()) {
      this.state = 'written'
      this.writtenOn = this.generation()
      this.realReplyExpected = true
      this.onWritten(this)
      return Buffer.from(`${this.text}\n\n`)
    }
    if (this.state === 'queued') this.finish({ kind: 'withdrawn', why: 'disconnected' })
    this.realReplyExpected = false
    return NOOP_BUF
  }

  /** esl-lite's command/reply for the last write of this item (or an Error when it ends). */
  resolve = (reply: EslReply | Error): void => {
    if (!this.realReplyExpected) return
    this.realReplyExpected = false
    if (reply instanceof Error) {
      if (this.state === 'written') this.finish({ kind: 'unconfirmed' })
      return
    }
    if (this.state === 'written') this.finish({ kind: 'answered', replyText: reply.headers.replyText ?? '', body: reply.body ?? NO_BODY })
  }

  /** Its socket is gone: no reply will come for the last write. */
  socketGone(): void {
    this.realReplyExpected = false
    this.lose()
  }

  /** Gives up before it was written: it never will be. Nothing if it was written already. */
  withdraw(why: 'disconnected' | 'timeout'): boolean {
    if (this.state !== 'queued') return false
    this.finish({ kind: 'withdrawn', why })
    return true
  }

  /**
   * Its reply is overdue, or its socket closed, after it was written: it may have run. A late
   * reply on the same socket is still consumed (replyPending) and ignored.
   */
  lose(): void {
    if (this.state !== 'written') return
    this.finish({ kind: 'unconfirmed' })
  }

  /** Written on its socket and FreeSWITCH has not replied yet (the link judgement counts it). */
  get replyPending(): boolean {
    return this.realReplyExpected
  }

  private finish(o: OutgoingOutcome): void {
    if (this.state === 'done') return
    this.state = 'done'
    this.settle(o)
  }
}
