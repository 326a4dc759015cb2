/**
 * One IVR session: one parked channel running documents top to bottom until the document ends,
 * the call is handed on, or the caller hangs up. The session keeps the control flow (Sections,
 * GoTo, the error handler, replaced documents) and is the ElementContext of the element
 * modules (elements/types.ts), made of its parts: the call's parameters and variables
 * (call-state.ts), the FreeSWITCH channel (channel.ts), the fetches (documents.ts) and the
 * idle guard (idle-guard.ts).
 *
 * Ending:
 * - the document ran out: the call is hung up (NORMAL_CLEARING), unless the last element was a
 *   Transfer that connected (FreeSWITCH ends the call itself: hangup_after_bridge) or a Hangup;
 * - a runtime error with no error handler: the call is hung up and the document's URL is told
 *   (`CallStatus=error`, `Error=<reason>`), as for a document that fails validation;
 * - the caller hung up (CHANNEL_HANGUP, or the runner closing): the AbortSignal fires, every wait
 *   returns at once, nothing more is sent to FreeSWITCH.
 *
 * Guards against documents that never wait for the caller: the idle guard (elements and
 * fetches between two FreeSWITCH applications), and MAX_ERROR_JUMPS runs of the error handler,
 * so a GoTo or Redirect loop cannot spin or hammer a server.
 */
import { randomUUID } from 'node:crypto'
import type { DomainDirectory } from '../../directory/directory.js'
import type { CommandError } from '../../pbx/commands.js'
import type { EslApp, FsEvent, PbxClient } from '../../pbx/types.js'
import type { Logger } from '../../util/logger.js'
import type { LegContext } from '../../xmlcurl/leg.js'
import { runElement, type ElementTable } from '../elements/index.js'
import { EXEC_TIMEOUT_MS, GONE, NEXT, type ElementContext, type LoadedDocument, type Outcome } from '../elements/types.js'
import type { Value } from '../expr/value.js'
import type { CallDescription } from '../fetch/call-params.js'
import type { IvrFetcher } from '../fetch/fetcher.js'
import type { HttpMethod, IvrDocument, IvrElement, Param, ParsedExpr, SourcePos } from '../syntax/types.js'
import { CallState } from './call-state.js'
import { SessionChannel } from './channel.js'
import { SessionDocuments, type InitialDocument } from './documents.js'
import { IdleGuard, MAX_IDLE_STEPS } from './idle-guard.js'
import type { TransferGate, TransferTarget } from '../transfer-gate.js'
import type { AsrSettings, IvrRecordingStore, RecordingTarget } from '../recordings.js'
import { err, ok, type Result } from '../../util/result.js'

/** @internal Exported for tests: test/ivr/runner runs the error handler up to it. */
export const MAX_ERROR_JUMPS = 10

/** The cause when the call ends because its document could not run. */
export const FAILURE_CAUSE = 'NORMAL_TEMPORARY_FAILURE'

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
  /** The prompt folder (config `ivr.media_dir`) where Play's file names are looked up. */
  readonly mediaDir: string
  /** Element modules (tests may replace one). */
  readonly elements?: ElementTable
  /** The channel limit's say on a Transfer (the engine); without it, every Transfer may ring. */
  readonly transferGate?: TransferGate
  /** Where `<Record>` keeps its files (the daemon's recording store); without it a Record is a runtime error. */
  readonly recordings?: IvrRecordingStore
  /** daemon.yaml `ivr.asr` with an engine (GetInput); absent without one. */
  readonly asr?: AsrSettings
  /** The API's prefix (`http.prefix`): a recording's RecordingUrl is `<prefix>/recordings/<id>/audio`. */
  readonly apiPrefix?: string
  /** The fax folder (`ivr.fax_dir`, resolved) of SendFax and ReceiveFax; without it a fax is a runtime error. */
  readonly faxDir?: string
}

export type StopReason = 'hangup' | 'shutdown'

const at = (pos: SourcePos | undefined, message: string): string =>
  pos === undefined ? message : `line ${pos.line}, column ${pos.column} (${pos.path}): ${message}`

export class IvrSession implements ElementContext {
  readonly uuid: string
  readonly domain: DomainDirectory
  readonly log: Logger
  readonly mediaDir: string
  private readonly controller = new AbortController()
  private readonly elements: ElementTable | undefined
  private readonly legContext: LegContext
  private readonly transferGate: TransferGate | undefined
  private readonly recordings: IvrRecordingStore | undefined
  private readonly apiPrefix: string
  readonly asr: AsrSettings | undefined
  readonly faxDir: string | undefined
  /** When FreeSWITCH said the channel hung up (ms since the epoch), for the call's duration. */
  private hungUpAtMs: number | undefined
  private readonly now: () => Date
  private readonly guard = new IdleGuard()
  private readonly state: CallState
  private readonly channel: SessionChannel
  private readonly documents: SessionDocuments
  private current: LoadedDocument | undefined
  private errorSection: string | undefined
  private errorJumps = 0

  constructor(d: SessionDeps) {
    this.uuid = d.uuid
    this.domain = d.domain
    this.mediaDir = d.mediaDir
    this.legContext = d.leg
    this.transferGate = d.transferGate
    this.recordings = d.recordings
    this.asr = d.asr
    this.apiPrefix = d.apiPrefix ?? '/api'
    this.faxDir = d.faxDir
    this.now = d.now
    this.elements = d.elements
    this.log = d.logger.child({ uuid: d.uuid, domain: d.domain.name })
    const signal = this.controller.signal
    this.state = new CallState(d.call, d.answered, { timeZone: d.domain.config.time_zone, now: d.now })
    this.channel = new SessionChannel({ uuid: d.uuid, pbx: d.pbx, signal, log: this.log, state: this.state, onApplication: () => this.guard.reset() })
    this.documents = new SessionDocuments({ fetcher: d.fetcher, signal, params: () => this.state.params(), guard: this.guard })
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
    this.state.markAnswered(e)
  }

  /** The channel hung up (its CHANNEL_HANGUP): every wait ends, and the call's end time is kept. */
  onHangup(e: FsEvent): void {
    const t = e['Event-Date-Timestamp']
    this.hungUpAtMs ??= t !== undefined && /^[1-9]\d{0,18}$/.test(t) ? Math.floor(Number(t) / 1000) : this.now().getTime()
    this.stop('hangup')
  }

  /** Whether FreeSWITCH said the channel hung up (the call's end is known). */
  hungUp(): boolean {
    return this.hungUpAtMs !== undefined
  }

  /**
   * The call ended: the last fetched document's URL is told `CallStatus=completed` with the
   * call's duration (`CallDuration`, whole seconds from its answer to its hangup, 0 when it was
   * never answered) and the parameters it had last (a fax's results among them). Inline
   * documents have no URL to tell. Best effort, like an error report.
   */
  async complete(): Promise<void> {
    const url = this.current?.url
    if (url === undefined) return
    const params = this.state.params()
    const end = this.hungUpAtMs ?? this.now().getTime()
    const answeredUs = /^[1-9]\d{0,18}$/.test(params.AnswerTime ?? '') ? Number(params.AnswerTime) : 0
    const duration = answeredUs === 0 ? 0 : Math.max(0, Math.floor((end - answeredUs / 1000) / 1000))
    await this.documents.notify(url, { ...params, CallStatus: 'completed', CallDuration: String(duration) })
  }

  onBridge(): void {
    this.channel.onBridge()
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
    await this.documents.settled()
  }

  /**
   * The runner closes: nobody will drive the parked channel any more, so it is hung up, unless
   * it is connected to someone (a Transfer's bridge): that conversation is left alone.
   */
  private async stopped(): Promise<void> {
    if (this.signal.reason !== 'shutdown') return
    if (this.channel.connected()) {
      this.log.info('ivr runner closing: connected call left to FreeSWITCH')
      return
    }
    this.log.info('ivr runner closing: call hung up')
    await this.hangup('NORMAL_CLEARING')
  }

  private async main(initial: InitialDocument): Promise<void> {
    const first = await this.documents.first(initial)
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
          this.state.setLastError(message)
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
    if (url !== undefined) this.documents.report(url, message)
  }

  // ------------------------------------------------------------------ ElementContext

  async runBlock(elements: readonly IvrElement[]): Promise<Outcome> {
    for (const el of elements) {
      if (this.signal.aborted) return GONE
      if (!this.guard.step()) {
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

  value<T>(p: Param<T>): Result<T, Outcome> {
    return this.state.value(p)
  }

  optional<T>(p: Param<T> | undefined): Result<T | undefined, Outcome> {
    return this.state.optional(p)
  }

  evaluate(e: ParsedExpr): Result<Value, Outcome> {
    return this.state.evaluate(e)
  }

  setVariable(name: string, value: Value): void {
    this.state.setVariable(name, value)
  }

  setDigits(digits: string): void {
    this.state.setDigits(digits)
  }

  setTransferFailureReason(reason: string): void {
    this.state.setTransferFailureReason(reason)
  }

  setResults(results: Readonly<Record<string, string>>): void {
    this.state.setResults(results)
  }

  async beginRecording(): Promise<Result<RecordingTarget, Outcome>> {
    const store = this.recordings
    if (store === undefined) return err({ kind: 'error', message: 'Record: this daemon keeps no recordings' })
    const id = randomUUID()
    const domain = this.domain.name
    const path = store.recordingFile(domain, id)
    if (!path.ok) return err({ kind: 'error', message: `Record: no file for the recording: ${path.error}` })
    const begun = await store.begin({ id, requestId: this.legContext.requestId ?? '', domain, legs: [this.uuid], startedAt: Date.now() })
    if (!begun.ok) return err({ kind: 'error', message: `Record: the recording's record could not be written: ${begun.error}` })
    return ok({ id, path: path.value, url: `${this.apiPrefix}/recordings/${id}/audio` })
  }

  async endRecording(id: string, durationMs: number | undefined): Promise<number> {
    const store = this.recordings
    if (store === undefined) return 0
    const done = await store.complete(id, durationMs !== undefined && durationMs > 0 ? { durationMs } : {})
    if (done.ok && done.value.status === 'completed' && durationMs !== 0) return done.value.durationMs ?? 0
    // Nothing heard (FreeSWITCH wrote the header alone), or no file: nothing to keep or serve.
    if (!done.ok) this.log.warn({ recordingId: id, error: done.error }, 'ivr Record: the recording could not be completed')
    await store.remove(this.domain.name, id)
    return 0
  }

  isAnswered(): boolean {
    return this.state.isAnswered()
  }

  answer(): Promise<Result<void, Outcome>> {
    return this.channel.answer()
  }

  exec(built: Result<EslApp, CommandError>, timeoutMs: number = EXEC_TIMEOUT_MS.short): Promise<Result<FsEvent, Outcome>> {
    return this.channel.exec(built, timeoutMs)
  }

  hangup(cause: string): Promise<void> {
    return this.channel.hangup(cause)
  }

  sleep(ms: number): Promise<boolean> {
    return this.channel.sleep(ms)
  }

  loadDocument(urls: readonly string[], method: HttpMethod): Promise<Outcome> {
    return this.documents.load(urls, method)
  }

  fetchJson(url: string, method: HttpMethod): Promise<Result<unknown, string>> {
    return this.documents.json(url, method)
  }

  checkMedia(files: readonly (string | undefined)[]): Promise<Result<void, Outcome>> {
    return this.documents.checkMedia(files)
  }

  setErrorHandler(section: string): void {
    this.errorSection = section
  }

  bridges(): number {
    return this.channel.bridges()
  }

  leg(): LegContext {
    return this.legContext
  }

  mayTransfer(target: TransferTarget): Promise<boolean> {
    const requestId = this.legContext.requestId
    if (this.transferGate === undefined || requestId === undefined) return Promise.resolve(true)
    return this.transferGate.mayTransfer(this.domain.name, requestId, this.uuid, target)
  }

  /** The form parameters of a fetch (docs/ivr.md "Fetching"). */
  params(): Record<string, string> {
    return this.state.params()
  }
}
