/**
 * One IVR session: one parked channel running documents top to bottom until the document ends,
 * the call is handed on, or the caller hangs up. The session is the ElementContext of the
 * element modules (elements/types.ts): it owns the call's variables, talks to FreeSWITCH (one
 * application at a time, sendmsg execute), fetches documents and keeps the control flow
 * (Sections, GoTo, the error handler, replaced documents).
 *
 * Ending:
 * - the document ran out: the call is hung up (NORMAL_CLEARING), unless the last element was a
 *   Transfer that connected (FreeSWITCH ends the call itself: hangup_after_bridge) or a Hangup;
 * - a runtime error with no error handler: the call is hung up and the document's URL is told
 *   (`CallStatus=error`, `Error=<reason>`), as for a document that fails validation;
 * - the caller hung up (CHANNEL_HANGUP, or the runner closing): the AbortSignal fires, every wait
 *   returns at once, nothing more is sent to FreeSWITCH.
 *
 * Guards against documents that never wait for the caller: at most MAX_IDLE_STEPS elements and
 * MAX_IDLE_LOADS fetches between two FreeSWITCH applications, and MAX_ERROR_JUMPS runs of the
 * error handler, so a GoTo or Redirect loop cannot spin or hammer a server.
 */
import type { DomainDirectory } from '../../directory/directory.js'
import { app, uuidKill, type CommandError } from '../../pbx/commands.js'
import type { EslApp, FsEvent, PbxClient, PbxError } from '../../pbx/types.js'
import type { Logger } from '../../util/logger.js'
import { err, ok, type Result } from '../../util/result.js'
import type { LegContext } from '../../xmlcurl/leg.js'
import { parseIvrDocument } from '../document/parse.js'
import { resolveOptional, resolveParam } from '../syntax/params.js'
import type { HttpMethod, IvrDocument, IvrElement, Param, ParsedExpr, SourcePos } from '../syntax/types.js'
import { evaluate, type EvalEnv } from '../expr/evaluate.js'
import type { Value } from '../expr/value.js'
import { buildCallParams, type CallDescription } from '../fetch/call-params.js'
import type { FetchError, IvrFetcher } from '../fetch/fetcher.js'
import { runElement, type ElementTable } from '../elements/index.js'
import { EXEC_TIMEOUT_MS, GONE, NEXT, runtimeError, type ElementContext, type LoadedDocument, type Outcome } from '../elements/types.js'
import { ABORTED, raceAbort, sleep } from '../../util/abort.js'

/** How prompts that FreeSWITCH downloads are named (elements/media.ts audioFile). */
const HTTP_CACHE = 'http_cache://'

export const MAX_IDLE_STEPS = 1000
export const MAX_IDLE_LOADS = 20
export const MAX_ERROR_JUMPS = 10

/** The cause when the call ends because its document could not run. */
export const FAILURE_CAUSE = 'NORMAL_TEMPORARY_FAILURE'

/** Where the first document comes from. */
export type InitialDocument =
  | { readonly kind: 'inline'; readonly xml: string }
  | { readonly kind: 'urls'; readonly urls: readonly string[] }
  /** Nothing to run (an unknown or expired key): the call is ended. */
  | { readonly kind: 'none'; readonly reason: string }

export interface SessionDeps {
  readonly uuid: string
  readonly domain: DomainDirectory
  readonly call: CallDescription
  readonly answered: boolean
  readonly leg: LegContext
  readonly pbx: PbxClient
  readonly fetcher: IvrFetcher
  readonly logger: Logger
  readonly now: () => Date
  /** Element modules (tests may replace one). */
  readonly elements?: ElementTable
}

export type StopReason = 'hangup' | 'shutdown'

const describePbxError = (e: PbxError): string => (e.kind === 'failed' ? `-ERR ${e.reply}` : e.kind)

const at = (pos: SourcePos | undefined, message: string): string =>
  pos === undefined ? message : `line ${pos.line}, column ${pos.column} (${pos.path}): ${message}`

export class IvrSession implements ElementContext {
  readonly uuid: string
  readonly domain: DomainDirectory
  readonly log: Logger
  private readonly controller = new AbortController()
  private readonly pbx: PbxClient
  private readonly fetcher: IvrFetcher
  private readonly env: EvalEnv
  private readonly elements: ElementTable | undefined
  private readonly base: CallDescription
  private readonly legContext: LegContext
  private readonly variables = new Map<string, Value>()
  private readonly reports: Promise<void>[] = []
  private answered: boolean
  private answerTime: string | undefined
  private digits: string | undefined
  private transferFailureReason: string | undefined
  private lastError: string | undefined
  private bridgeCount = 0
  /** A CHANNEL_BRIDGE came while the current application runs: the call is connected to someone. */
  private bridgedNow = false
  private current: LoadedDocument | undefined
  private errorSection: string | undefined
  private idleSteps = 0
  private idleLoads = 0
  private errorJumps = 0

  constructor(d: SessionDeps) {
    this.uuid = d.uuid
    this.domain = d.domain
    this.base = d.call
    this.answered = d.answered
    this.answerTime = d.call.answerTime === undefined ? undefined : String(d.call.answerTime)
    this.legContext = d.leg
    this.pbx = d.pbx
    this.fetcher = d.fetcher
    this.elements = d.elements
    this.log = d.logger.child({ uuid: d.uuid, domain: d.domain.name })
    this.env = { timeZone: d.domain.config.time_zone, now: d.now }
  }

  // ------------------------------------------------------------------ events (from the runner)

  get signal(): AbortSignal {
    return this.controller.signal
  }

  /** The caller hung up, or the runner closes: every wait ends now. */
  stop(reason: StopReason): void {
    if (!this.controller.signal.aborted) this.controller.abort(reason)
  }

  onAnswer(e: FsEvent): void {
    this.markAnswered(e)
  }

  onBridge(): void {
    this.bridgeCount++
    this.bridgedNow = true
  }

  // ------------------------------------------------------------------ the run

  get document(): IvrDocument {
    if (this.current === undefined) throw new Error('no document loaded')
    return this.current.document
  }

  /** Runs the session to its end; never rejects. */
  async run(initial: InitialDocument): Promise<void> {
    try {
      await this.main(initial)
    } catch (e) {
      this.log.error({ err: e }, 'ivr session failed')
      await this.hangup(FAILURE_CAUSE)
    }
    await Promise.all(this.reports)
  }

  /**
   * The runner closes: nobody will drive the parked channel any more, so it is hung up, unless
   * it is connected to someone (a Transfer's bridge): that conversation is left alone.
   */
  private async stopped(): Promise<void> {
    if (this.signal.reason !== 'shutdown') return
    if (this.bridgedNow) {
      this.log.info('ivr runner closing: connected call left to FreeSWITCH')
      return
    }
    this.log.info('ivr runner closing: call hung up')
    await this.hangup('NORMAL_CLEARING')
  }

  private async main(initial: InitialDocument): Promise<void> {
    const first = await this.loadInitial(initial)
    if (first.kind === 'gone') return this.stopped()
    if (first.kind !== 'replace') {
      this.log.warn({ reason: first.kind === 'error' ? first.message : first.kind }, 'ivr document not run')
      await this.hangup(FAILURE_CAUSE)
      return
    }
    this.current = first.document
    this.log.info({ url: first.document.url ?? 'inline' }, 'ivr session started')
    let block: readonly IvrElement[] = first.document.document.body
    for (;;) {
      const outcome = await this.runBlock(block)
      switch (outcome.kind) {
        case 'gone':
          this.log.debug({ reason: String(this.signal.reason) }, 'ivr session stopped')
          return this.stopped()
        case 'next':
          this.log.info('ivr document ended')
          await this.hangup('NORMAL_CLEARING')
          return
        case 'end':
          this.log.info({ reason: outcome.reason }, 'ivr session ended')
          if (outcome.hangup) await this.hangup('NORMAL_CLEARING')
          return
        case 'goto': {
          const section = this.document.sections.get(outcome.section)
          if (section === undefined) return this.fail(`there is no Section named ${JSON.stringify(outcome.section)}`)
          block = section
          break
        }
        case 'replace':
          this.current = outcome.document
          this.errorSection = undefined
          block = outcome.document.document.body
          this.log.debug({ url: outcome.document.url }, 'ivr document replaced')
          break
        case 'error': {
          const message = at(outcome.at, outcome.message)
          const handler = this.errorSection === undefined ? undefined : this.document.sections.get(this.errorSection)
          if (handler === undefined || this.errorJumps >= MAX_ERROR_JUMPS) return this.fail(message)
          this.errorJumps++
          this.lastError = message
          this.log.info({ error: message, section: this.errorSection }, 'ivr runtime error: error handler')
          block = handler
          break
        }
      }
    }
  }

  /** An error nobody handles: the call ends and the document's URL is told. */
  private async fail(message: string): Promise<void> {
    this.log.warn({ error: message }, 'ivr runtime error: call ended')
    await this.hangup(FAILURE_CAUSE)
    const url = this.current?.url
    if (url !== undefined) this.report(url, message)
  }

  private report(url: string, error: string): void {
    this.reports.push(this.fetcher.reportError(url, this.params(), error))
  }

  private async loadInitial(initial: InitialDocument): Promise<Outcome> {
    switch (initial.kind) {
      case 'none':
        return { kind: 'error', message: initial.reason }
      case 'urls':
        return this.loadDocument(initial.urls, 'POST')
      case 'inline': {
        const parsed = parseIvrDocument(initial.xml)
        if (!parsed.ok) return { kind: 'error', message: `the inline document is invalid: ${parsed.error.reason}` }
        return { kind: 'replace', document: { document: parsed.value } }
      }
    }
  }

  // ------------------------------------------------------------------ ElementContext

  async runBlock(elements: readonly IvrElement[]): Promise<Outcome> {
    for (const el of elements) {
      if (this.signal.aborted) return GONE
      if (++this.idleSteps > MAX_IDLE_STEPS) {
        return { kind: 'error', message: `more than ${MAX_IDLE_STEPS} elements ran without playing anything to the caller (an endless loop?)`, at: el.pos }
      }
      let outcome: Outcome
      try {
        outcome = await runElement(el, this, this.elements)
      } catch (e) {
        this.log.error({ err: e, element: el.pos.path }, 'ivr element failed')
        outcome = { kind: 'error', message: `internal error in <${el.type}>` }
      }
      if (this.signal.aborted) return GONE
      if (outcome.kind === 'error' && outcome.at === undefined) outcome = { ...outcome, at: el.pos }
      if (outcome.kind !== 'next') return outcome
    }
    return NEXT
  }

  private scope(): Map<string, Value> {
    const scope = new Map<string, Value>(Object.entries(buildCallParams(this.describe(false))))
    if (this.lastError !== undefined) scope.set('Error', this.lastError)
    for (const [k, x] of this.variables) scope.set(k, x)
    return scope
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

  setVariable(name: string, value: Value): void {
    this.variables.set(name, value)
  }

  setDigits(digits: string): void {
    this.digits = digits
  }

  setTransferFailureReason(reason: string): void {
    this.transferFailureReason = reason
  }

  isAnswered(): boolean {
    return this.answered
  }

  private markAnswered(e: FsEvent): void {
    this.answered = true
    const t = e['Caller-Channel-Answered-Time']
    if (t !== undefined && /^[1-9]\d*$/.test(t)) this.answerTime = t
    else this.answerTime ??= String(this.env.now().getTime() * 1000)
  }

  async answer(): Promise<Result<void, Outcome>> {
    if (this.answered) return ok(undefined)
    const r = await this.exec(app('answer'))
    if (!r.ok) return r
    this.markAnswered(r.value)
    return ok(undefined)
  }

  async exec(built: Result<EslApp, CommandError>, timeoutMs: number = EXEC_TIMEOUT_MS.short): Promise<Result<FsEvent, Outcome>> {
    if (!built.ok) return err({ kind: 'error', message: `cannot run the application: ${built.error.field} ${built.error.reason}` })
    if (this.signal.aborted) return err(GONE)
    this.idleSteps = 0
    this.idleLoads = 0
    const a = built.value
    this.bridgedNow = false
    const r = await raceAbort(this.pbx.execute(this.uuid, a, timeoutMs), this.signal)
    if (r === ABORTED || this.signal.aborted) return err(GONE)
    this.bridgedNow = false
    if (!r.ok) return err({ kind: 'error', message: `FreeSWITCH did not run ${a.app}: ${describePbxError(r.error)}` })
    // The application ended because the channel did: its CHANNEL_HANGUP is on its way.
    if (r.value['Answer-State'] === 'hangup') return err(GONE)
    if (r.value['Answer-State'] === 'answered' && !this.answered) this.markAnswered(r.value)
    return ok(r.value)
  }

  async hangup(cause: string): Promise<void> {
    if (this.signal.aborted && this.signal.reason === 'hangup') return
    const cmd = uuidKill(this.uuid, cause)
    if (!cmd.ok) return
    const r = await this.pbx.bgapi(cmd.value, 5000)
    if (!r.ok || !r.value.startsWith('+OK')) this.log.debug({ reply: r.ok ? r.value.trim() : r.error.kind }, 'ivr hangup not confirmed')
  }

  sleep(ms: number): Promise<boolean> {
    return sleep(ms, this.signal)
  }

  private countLoad(): Outcome | undefined {
    if (++this.idleLoads > MAX_IDLE_LOADS) {
      return { kind: 'error', message: `more than ${MAX_IDLE_LOADS} fetches without playing anything to the caller (a Redirect loop?)` }
    }
    return undefined
  }

  async loadDocument(urls: readonly string[], method: HttpMethod): Promise<Outcome> {
    if (this.signal.aborted) return GONE
    const tooMany = this.countLoad()
    if (tooMany !== undefined) return tooMany
    const params = this.params()
    const r = await raceAbort(this.fetcher.fetchDocument(urls, params, method), this.signal)
    if (r === ABORTED || this.signal.aborted) return GONE
    if (!r.ok) {
      this.reportInvalid(urls, r.error)
      return { kind: 'error', message: `no document from ${urls.join(', ')}: ${r.error.message}` }
    }
    const url = r.value.requestedUrl
    const parsed = parseIvrDocument(r.value.body)
    if (!parsed.ok) {
      this.report(url, parsed.error.reason)
      return { kind: 'error', message: `the document from ${url} is invalid: ${parsed.error.reason}` }
    }
    return { kind: 'replace', document: { document: parsed.value, url } }
  }

  /** URLs that answered with a document the fetcher's `accept` refused are told why. */
  private reportInvalid(urls: readonly string[], e: FetchError): void {
    const attempts = e.attempts ?? [e]
    attempts.forEach((a, i) => {
      const url = urls[i]
      if (a.kind === 'invalid_body' && url !== undefined) this.report(url, a.message)
    })
  }

  async fetchJson(url: string, method: HttpMethod): Promise<Result<unknown, string>> {
    if (this.signal.aborted) return err('the call ended')
    const tooMany = this.countLoad()
    if (tooMany !== undefined) return err(tooMany.kind === 'error' ? tooMany.message : 'too many fetches')
    const r = await raceAbort(this.fetcher.fetchJson(url, this.params(), method), this.signal)
    if (r === ABORTED) return err('the call ended')
    return r.ok ? r : err(r.error.message)
  }

  async checkMedia(files: readonly (string | undefined)[]): Promise<Result<void, Outcome>> {
    const urls = files
      .flatMap((f) => (f ?? '').replace(/^file_string:\/\//, '').split('!'))
      .filter((f) => f.startsWith(HTTP_CACHE))
      .map((f) => f.slice(HTTP_CACHE.length))
    for (const url of urls) {
      const r = await raceAbort(this.fetcher.checkTarget(url), this.signal)
      if (r === ABORTED) return err(GONE)
      if (!r.ok) return err(runtimeError(`media URL refused: ${r.error.message}`))
    }
    return ok(undefined)
  }

  setErrorHandler(section: string): void {
    this.errorSection = section
  }

  bridges(): number {
    return this.bridgeCount
  }

  leg(): LegContext {
    return this.legContext
  }

  // ------------------------------------------------------------------ call parameters

  private describe(withVariables: boolean): CallDescription {
    const d: CallDescription = {
      ...this.base,
      status: this.answered ? 'in-progress' : 'ringing',
      ...(this.answerTime !== undefined ? { answerTime: this.answerTime } : {}),
      ...(this.digits !== undefined ? { digits: this.digits } : {}),
      ...(this.transferFailureReason !== undefined ? { transferFailureReason: this.transferFailureReason } : {}),
    }
    return withVariables ? { ...d, variables: Object.fromEntries(this.variables) } : d
  }

  /** The form parameters of a fetch (ivr-xml.md "Call parameters sent to an XML URL"). */
  params(): Record<string, string> {
    return buildCallParams(this.describe(true))
  }
}
