/**
 * The one interface every element module implements, and what a running session offers them.
 *
 * The shape follows jambonz feature-server's lib/tasks/ (one module per verb, a table from verb
 * name to module, a shared call-session object the tasks act through): here an element module
 * is `{ name, attributes, parse(node, ctx), run(element, ctx) }`: it owns what it accepts, how
 * it is read from the document and how it runs. The table is elements/index.ts, the
 * `ParseContext` (syntax/reader.ts) is the document parser, and `ElementContext` the session
 * (runner/session.ts). Modules never talk to FreeSWITCH, the fetcher or the directory except
 * through the context, so each can be tested with a fake session or a fake PbxClient.
 *
 * Errors are values: every context call that can fail returns `Result<T, Outcome>`, where the
 * error side is the Outcome the element should return as it is (`gone` when the caller hung up,
 * `error` for a runtime error that the document's SetErrorHandler may catch).
 */
import type { DomainDirectory } from '../../directory/directory.js'
import type { CommandError } from '../../pbx/commands.js'
import type { EslApp, FsEvent } from '../../pbx/types.js'
import type { Logger } from '../../util/logger.js'
import type { Result } from '../../util/result.js'
import type { LegContext } from '../../xmlcurl/leg.js'
import type { TransferTarget } from '../transfer-gate.js'
import type { AsrSettings, RecordingTarget } from '../recordings.js'
import type { ElementNode, ParseContext } from '../syntax/reader.js'
import type { HttpMethod, IvrDocument, IvrElement, Param, ParsedExpr, SourcePos } from '../syntax/types.js'
import type { Value } from '../expr/value.js'

/** A validated document and where it came from. */
export interface LoadedDocument {
  readonly document: IvrDocument
  /** The URL that served it (as listed in the document or destination); absent for inline documents. */
  readonly url?: string
}

/** What happened when an element (or a block of elements) ran: how the session goes on. */
export type Outcome =
  /** Go on with the next element. */
  | { readonly kind: 'next' }
  /** Continue in the named Section of the current document. */
  | { readonly kind: 'goto'; readonly section: string }
  /** The document is replaced (Redirect, GetDigits action, Transfer failureAction URL...). */
  | { readonly kind: 'replace'; readonly document: LoadedDocument }
  /**
   * The session ends. `hangup` false: the call was already ended or handed on (Hangup,
   * a Transfer that connected, a parked call taken by someone else).
   */
  | { readonly kind: 'end'; readonly hangup: boolean; readonly reason: string }
  /** A runtime error (missing file, failed fetch, bad template value...): the error handler or the end. */
  | { readonly kind: 'error'; readonly message: string; readonly at?: SourcePos }
  /** The caller hung up (or the runner is closing): stop at once, touch nothing. */
  | { readonly kind: 'gone' }

export const NEXT: Outcome = { kind: 'next' }
export const GONE: Outcome = { kind: 'gone' }
export const runtimeError = (message: string): Outcome => ({ kind: 'error', message })

/** How long FreeSWITCH may take for an application, by kind (the PbxClient's execute timeout). */
export const EXEC_TIMEOUT_MS = {
  /** set, export, answer, unset. */
  short: 10_000,
  /** playback, speak, play_and_get_digits: prompts of unknown length (http audio included). */
  media: 2 * 3600_000,
  /** bridge: lasts as long as the connected call. */
  bridge: 24 * 3600_000,
} as const

export interface ElementContext {
  /** The channel the session runs on. */
  readonly uuid: string
  readonly domain: DomainDirectory
  readonly log: Logger
  /** Aborted when the caller hangs up or the runner closes. */
  readonly signal: AbortSignal
  /** The document being run (its Sections). */
  readonly document: IvrDocument
  /** The prompt folder (`ivr.media_dir`): Play's file names are inside it (audio-source.ts). */
  readonly mediaDir: string
  /** The fax folder (`ivr.fax_dir`, resolved; one sub-folder per domain): SendFax and ReceiveFax files are inside it. */
  readonly faxDir?: string | undefined

  /** An attribute or text value; a template is rendered with the call's variables and checked. */
  value<T>(p: Param<T>): Result<T, Outcome>
  optional<T>(p: Param<T> | undefined): Result<T | undefined, Outcome>
  evaluate(e: ParsedExpr): Result<Value, Outcome>

  /** Variables of `<Set>` and `<GetJSON>` (sent as var_<name>). */
  setVariable(name: string, value: Value): void
  /** `Digits` after GetDigits ('' when nothing valid was entered). */
  setDigits(digits: string): void
  /** `TransferFailureReason` after a failed Transfer. */
  setTransferFailureReason(reason: string): void
  /** Record's and GetInput's results (RecordingId, InputType, Speech...): call parameters from now on. */
  setResults(results: Readonly<Record<string, string>>): void

  /** The speech recognition of daemon.yaml `ivr.asr` (read when the session began); undefined without an engine. */
  readonly asr: AsrSettings | undefined
  /**
   * A new recording of this call in the recording store (src/recording/): its record begun
   * (`recording`), its file's path for FreeSWITCH and its API path. A runtime error when the
   * daemon has no store or the store refuses.
   */
  beginRecording(): Promise<Result<RecordingTarget, Outcome>>
  /**
   * The recording ended: completed with FreeSWITCH's duration (or the WAV header's), or, when
   * it holds no audio, removed (nothing to keep or serve). Resolves with the duration kept, in
   * ms (0: removed).
   */
  endRecording(id: string, durationMs: number | undefined): Promise<number>

  isAnswered(): boolean
  /** Answers the call unless it is answered already. */
  answer(): Promise<Result<void, Outcome>>
  /**
   * Runs a dialplan application on the channel (sendmsg execute) and resolves with its
   * CHANNEL_EXECUTE_COMPLETE. A refused builder result becomes a runtime error.
   */
  exec(app: Result<EslApp, CommandError>, timeoutMs?: number): Promise<Result<FsEvent, Outcome>>
  /** Ends the call with a hangup cause (uuid_kill); best effort. */
  hangup(cause: string): Promise<void>
  /** Waits on the daemon's side (Park timeout); false when the channel went away first. */
  sleep(ms: number): Promise<boolean>

  /** Runs nested elements (If/Switch/Cond branches); a non-`next` outcome stops the block. */
  runBlock(elements: readonly IvrElement[]): Promise<Outcome>
  /**
   * Fetches a document (comma list = fallbacks, call parameters POSTed or sent as query),
   * validates it and returns the `replace` outcome; failures are runtime errors.
   */
  loadDocument(urls: readonly string[], method: HttpMethod): Promise<Outcome>
  /** GetJSON: the parsed JSON, or an error message. */
  fetchJson(url: string, method: HttpMethod): Promise<Result<unknown, string>>
  /**
   * Files about to be handed to FreeSWITCH: every `http_cache://<url>` in them (plain, or inside
   * a `file_string://a!b`) must pass the fetch rules, or this is a runtime error. FreeSWITCH
   * downloads those itself, so without this an IVR document could make it fetch loopback or
   * private addresses that the daemon's own fetches refuse.
   */
  checkMedia(files: readonly (string | undefined)[]): Promise<Result<void, Outcome>>
  /** Runtime errors from now on continue in this Section (which must exist). */
  setErrorHandler(section: string): void

  /** How many CHANNEL_BRIDGE events this channel had so far (Transfer tells a connected bridge by it). */
  bridges(): number
  /** The calling channel as the dialplan would see it (for Transfer's route builders). */
  leg(): LegContext
  /**
   * Whether the channel limit has room for every leg a Transfer to `target` rings
   * (transfer-gate.ts): asked of the engine for a leg of an API request; true for other calls
   * (counted, never refused: docs/engine.md "Channel limit").
   */
  mayTransfer(target: TransferTarget): Promise<boolean>
}

/** One element module (jambonz: one task class per verb). */
export interface ElementModule<E extends IvrElement = IvrElement> {
  readonly name: E['type']
  /** The attributes it accepts (case-sensitive); any other is refused before `parse` runs. */
  readonly attributes: readonly string[]
  /**
   * Child elements that exist only inside this one (If: Then and Else), with their attributes:
   * the parser knows their names (a misplaced `<Then>` is "only allowed inside <If>") and
   * checks their attribute names when the module enters them (ParseContext.branches).
   */
  readonly branches?: Readonly<Record<string, readonly string[]>>
  /**
   * Reads the element into its typed form (its attribute names are checked already), or
   * refuses the document with `fail` from syntax/reader.ts.
   */
  parse(node: ElementNode, ctx: ParseContext): E
  run(element: E, ctx: ElementContext): Promise<Outcome>
}

/** Play, Speak and Wait: elements of their own, and the prompts of GetDigits. */
export interface PromptModule<E extends IvrElement> extends ElementModule<E> {
  /** The files the prompt plays (`loop` times), as items of a GetDigits `file_string://`. */
  files(element: E, ctx: ElementContext): Result<string[], Outcome>
}
