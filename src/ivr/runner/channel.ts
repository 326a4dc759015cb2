/**
 * A session's side of its FreeSWITCH channel: one application at a time (sendmsg execute,
 * waiting for its CHANNEL_EXECUTE_COMPLETE), answering, hanging up, and the bridges the
 * channel had. Every wait ends at once when the session's signal fires (the caller hung up or
 * the runner closes); nothing is sent to FreeSWITCH after that, except the hang-up of a runner
 * that closes.
 */
import { app, uuidKill, type CommandError } from '../../pbx/commands.js'
import type { EslApp, FsEvent, PbxClient, PbxError } from '../../pbx/types.js'
import { ABORTED, raceAbort, sleep } from '../../util/abort.js'
import type { Logger } from '../../util/logger.js'
import { err, ok, type Result } from '../../util/result.js'
import { EXEC_TIMEOUT_MS, GONE, type Outcome } from '../elements/types.js'
import type { CallState } from './call-state.js'

export interface ChannelDeps {
  readonly uuid: string
  readonly pbx: PbxClient
  readonly signal: AbortSignal
  readonly log: Logger
  /** Told when an application answered the call. */
  readonly state: CallState
  /** Called before every application FreeSWITCH runs (the idle guard's reset). */
  readonly onApplication: () => void
}

const describePbxError = (e: PbxError): string => (e.kind === 'failed' ? `-ERR ${e.reply}` : e.kind)

export class SessionChannel {
  private bridgeCount = 0
  /** A CHANNEL_BRIDGE came while the current application runs: the call is connected to someone. */
  private bridgedNow = false

  constructor(private readonly d: ChannelDeps) {}

  onBridge(): void {
    this.bridgeCount++
    this.bridgedNow = true
  }

  /** How many CHANNEL_BRIDGE events this channel had so far. */
  bridges(): number {
    return this.bridgeCount
  }

  /** Whether the running application bridged the call to someone (a Transfer that connected). */
  connected(): boolean {
    return this.bridgedNow
  }

  /** Answers the call unless it is answered already. */
  async answer(): Promise<Result<void, Outcome>> {
    if (this.d.state.isAnswered()) return ok(undefined)
    const r = await this.exec(app('answer'))
    if (!r.ok) return r
    this.d.state.markAnswered(r.value)
    return ok(undefined)
  }

  /** Runs an application and resolves with its CHANNEL_EXECUTE_COMPLETE; a refused builder result is a runtime error. */
  async exec(built: Result<EslApp, CommandError>, timeoutMs: number = EXEC_TIMEOUT_MS.short): Promise<Result<FsEvent, Outcome>> {
    if (!built.ok) return err({ kind: 'error', message: `cannot run the application: ${built.error.field} ${built.error.reason}` })
    const { signal } = this.d
    if (signal.aborted) return err(GONE)
    this.d.onApplication()
    const a = built.value
    this.bridgedNow = false
    const r = await raceAbort(this.d.pbx.execute(this.d.uuid, a, timeoutMs), signal)
    if (r === ABORTED || signal.aborted) return err(GONE)
    this.bridgedNow = false
    if (!r.ok) return err({ kind: 'error', message: `FreeSWITCH did not run ${a.app}: ${describePbxError(r.error)}` })
    // The application ended because the channel did: its CHANNEL_HANGUP is on its way.
    if (r.value['Answer-State'] === 'hangup') return err(GONE)
    if (r.value['Answer-State'] === 'answered' && !this.d.state.isAnswered()) this.d.state.markAnswered(r.value)
    return ok(r.value)
  }

  /** Ends the call with a hangup cause (uuid_kill); best effort, and nothing to do once the caller hung up. */
  async hangup(cause: string): Promise<void> {
    const { signal } = this.d
    if (signal.aborted && signal.reason === 'hangup') return
    const cmd = uuidKill(this.d.uuid, cause)
    if (!cmd.ok) return
    const r = await this.d.pbx.bgapi(cmd.value, 5000)
    if (!r.ok || !r.value.startsWith('+OK')) this.d.log.debug({ reply: r.ok ? r.value.trim() : r.error.kind }, 'ivr hangup not confirmed')
  }

  /** Waits on the daemon's side; false when the channel went away first. */
  sleep(ms: number): Promise<boolean> {
    return sleep(ms, this.d.signal)
  }
}
