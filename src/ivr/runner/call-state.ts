/**
 * What a session knows about its call, and so what a document sees: the call parameters
 * (CallStatus, AnswerTime, Digits, TransferFailureReason, Error...) and the variables of
 * `<Set>` and `<GetJSON>`. Attribute templates and expressions are resolved against it, and
 * the form parameters of every fetch are built from it (docs/ivr.md
 * "Fetching").
 */
import type { FsEvent } from '../../pbx/types.js'
import { err, type Result } from '../../util/result.js'
import type { Outcome } from '../elements/types.js'
import { evaluate, type EvalEnv } from '../expr/evaluate.js'
import type { Value } from '../expr/value.js'
import { buildCallParams, type CallDescription } from '../fetch/call-params.js'
import { resolveOptional, resolveParam } from '../syntax/params.js'
import type { Param, ParsedExpr } from '../syntax/types.js'

export class CallState {
  private readonly variables = new Map<string, Value>()
  private answered: boolean
  private answerTime: string | undefined
  private digits: string | undefined
  private transferFailureReason: string | undefined
  /** Record's and GetInput's results (RecordingId, InputType, ...): the last value of each. */
  private readonly results = new Map<string, string>()
  private lastError: string | undefined

  constructor(
    /** The call as the parked channel described it. */
    private readonly base: CallDescription,
    answered: boolean,
    private readonly env: EvalEnv,
  ) {
    this.answered = answered
    this.answerTime = base.answerTime === undefined ? undefined : String(base.answerTime)
  }

  isAnswered(): boolean {
    return this.answered
  }

  /** The channel was answered (its event, or an application's answer); the event's time when it has one. */
  markAnswered(e: FsEvent): void {
    this.answered = true
    const t = e['Caller-Channel-Answered-Time']
    if (t !== undefined && /^[1-9]\d*$/.test(t)) this.answerTime = t
    else this.answerTime ??= String(this.env.now().getTime() * 1000)
  }

  setVariable(name: string, value: Value): void {
    this.variables.set(name, value)
  }

  setDigits(digits: string): void {
    this.digits = digits
  }

  setTransferFailureReason(reason: string): void {
    this.transferFailureReason = reason
  }

  setResults(results: Readonly<Record<string, string>>): void {
    for (const [name, value] of Object.entries(results)) this.results.set(name, value)
  }

  /** `Error` while the error handler runs. */
  setLastError(message: string): void {
    this.lastError = message
  }

  value<T>(p: Param<T>): Result<T, Outcome> {
    const r = resolveParam(p, this.scope(), this.env)
    return r.ok ? r : err({ kind: 'error', message: r.error })
  }

  optional<T>(p: Param<T> | undefined): Result<T | undefined, Outcome> {
    const r = resolveOptional(p, this.scope(), this.env)
    return r.ok ? r : err({ kind: 'error', message: r.error })
  }

  evaluate(e: ParsedExpr): Result<Value, Outcome> {
    const r = evaluate(e.ast, this.scope(), this.env)
    return r.ok ? r : err({ kind: 'error', message: `${JSON.stringify(e.source)}: ${r.error}` })
  }

  /** The form parameters of a fetch (docs/ivr.md "Fetching"). */
  params(): Record<string, string> {
    return buildCallParams(this.describe(true))
  }

  private scope(): Map<string, Value> {
    const scope = new Map<string, Value>(Object.entries(buildCallParams(this.describe(false))))
    if (this.lastError !== undefined) scope.set('Error', this.lastError)
    for (const [k, x] of this.variables) scope.set(k, x)
    return scope
  }

  private describe(withVariables: boolean): CallDescription {
    const d: CallDescription = {
      ...this.base,
      status: this.answered ? 'in-progress' : 'ringing',
      ...(this.answerTime !== undefined ? { answerTime: this.answerTime } : {}),
      ...(this.digits !== undefined ? { digits: this.digits } : {}),
      ...(this.transferFailureReason !== undefined ? { transferFailureReason: this.transferFailureReason } : {}),
      ...(this.results.size > 0 ? { results: Object.fromEntries(this.results) } : {}),
    }
    return withVariables ? { ...d, variables: Object.fromEntries(this.variables) } : d
  }
}
