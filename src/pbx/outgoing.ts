/**
 * One command of ours on its way to FreeSWITCH, written at most once, never after we gave up
 * on it. This is what makes "an error reply means no call" hold at the wire (docs/design.md,
 * "An error reply means no call"):
 *
 * - `queued` → `written` when its turn comes on the session's queue and the link may carry it
 *   (take(), src/pbx/esl-session.ts);
 * - `queued` → `withdrawn` when we give up before it was written (the link went quiet or
 *   closed, FreeSWITCH announced its shutdown, the wait was too long, or the link could not
 *   carry it when its turn came): the caller is told `disconnected`/`timeout`, and the session
 *   skips it: it never reaches FreeSWITCH;
 * - `written` → `answered` with its reply;
 * - `written` → `unconfirmed` when its socket closed, or its reply is overdue: it may run, so
 *   the caller must not answer an error for it. A command is written on one socket only: the
 *   session never writes it again on the next one.
 */

/** Why a command ended without FreeSWITCH answering it. */
export type Unanswered =
  /** Never written: FreeSWITCH never saw it. */
  | { readonly kind: 'withdrawn'; readonly why: 'disconnected' | 'timeout' }
  /** Written, reply lost or overdue: it may have run. */
  | { readonly kind: 'unconfirmed' }

export type OutgoingOutcome =
  | {
      readonly kind: 'answered'
      /** The command/reply's Reply-Text ('' for an api/response). */
      readonly replyText: string
      /** Its body: the output of an `api` command, empty for any other. */
      readonly body: Buffer
    }
  | Unanswered

type State = 'queued' | 'written' | 'done'

export class Outgoing {
  private state: State = 'queued'
  /** The socket generation it was written on (0: not written). */
  private writtenOn = 0
  /** Written, and its reply has not been read yet (it is the command in flight on its socket). */
  private awaitingReply = false
  private settle!: (o: OutgoingOutcome) => void
  readonly outcome: Promise<OutgoingOutcome> = new Promise((r) => (this.settle = r))

  /**
   * @param text the command with its headers, without the final blank line
   * @param canWrite whether the link may carry it when its turn comes (else it is withdrawn then)
   * @param body a body (sendmsg's application argument), sent as text/plain with its Content-Length
   */
  constructor(
    private readonly text: string,
    private readonly canWrite: () => boolean = () => true,
    private readonly body?: Buffer,
  ) {}

  get isQueued(): boolean {
    return this.state === 'queued'
  }

  get socketGeneration(): number {
    return this.writtenOn
  }

  /** Written on its socket and FreeSWITCH has not replied yet (the link judgement counts it). */
  get replyPending(): boolean {
    return this.awaitingReply
  }

  /**
   * Its turn on socket `generation`: the bytes to write, once; undefined when it is not to be
   * written (withdrawn before, or now because the link cannot carry it).
   */
  take(generation: number): Buffer | undefined {
    if (this.state !== 'queued') return undefined
    if (!this.canWrite()) {
      this.finish({ kind: 'withdrawn', why: 'disconnected' })
      return undefined
    }
    this.state = 'written'
    this.writtenOn = generation
    this.awaitingReply = true
    if (this.body === undefined) return Buffer.from(`${this.text}\n\n`)
    return Buffer.concat([Buffer.from(`${this.text}\nContent-Type: text/plain\nContent-Length: ${this.body.length}\n\n`), this.body])
  }

  /** The reply read for it on its socket (a late one, after it was given up, is consumed and ignored). */
  answer(replyText: string, body: Buffer): void {
    if (!this.awaitingReply) return
    this.awaitingReply = false
    if (this.state === 'written') this.finish({ kind: 'answered', replyText, body })
  }

  /** Its socket is gone: no reply will come for it. */
  socketGone(): void {
    this.awaitingReply = false
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

  private finish(o: OutgoingOutcome): void {
    if (this.state === 'done') return
    this.state = 'done'
    this.settle(o)
  }
}
