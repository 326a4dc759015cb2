/**
 * What the rest of the daemon sees of FreeSWITCH. The connection (pbx/connection.ts) implements
 * it over the daemon's Event Socket session (pbx/esl-session.ts); tests may implement it over the simulator. Command text is a branded type
 * that only pbx/commands.ts can produce, so no other module can write ESL text.
 */
import type { Result } from '../util/result.js'
import type { EventHeader } from './event-headers.js'

declare const eslCommandBrand: unique symbol
/** An API command line (without the `api`/`bgapi` verb), validated and escaped by pbx/commands.ts. */
export type EslCommand = string & { readonly [eslCommandBrand]: true }

declare const instantBrand: unique symbol
/**
 * A command that answers at once: it reads or writes a value, never waits on a channel or the
 * network. Only such a command may run with `api` (PbxClient.api), which holds FreeSWITCH's
 * thread for our ESL connection while it runs (mod_event_socket.c parse_command runs api_exec
 * inline: no event reaches us meanwhile); any other goes through `bgapi`, a thread of its own.
 */
export type InstantCommand = EslCommand & { readonly [instantBrand]: true }

declare const eslAppBrand: unique symbol
/** A dialplan application and its argument for `sendmsg execute`, built by pbx/commands.ts. */
export type EslApp = { readonly app: string; readonly arg: string } & { readonly [eslAppBrand]: true }

/**
 * One FreeSWITCH event as its header map (event-json: every value is a string), typed by the
 * headers the daemon reads (event-headers.ts): a header not listed there does not compile, and
 * a channel event carries only those (event-json.ts).
 */
export type FsEvent = Readonly<Partial<Record<EventHeader, string>>>

export type PbxError =
  | { readonly kind: 'disconnected' }
  | { readonly kind: 'timeout' }
  /** FreeSWITCH answered `-ERR ...` (the text after `-ERR `, e.g. `USER_BUSY`). */
  | { readonly kind: 'failed'; readonly reply: string }

/** Whether FreeSWITCH is reachable: /healthz and pbx_unavailable read it. */
export interface PbxHealth {
  isConnected(): boolean
}

export interface PbxClient extends PbxHealth {
  /** Runs a command with `bgapi` and resolves with the job's body (`+OK ...` or `-ERR ...` text, verbatim). */
  bgapi(command: EslCommand, timeoutMs?: number): Promise<Result<string, PbxError>>
  /**
   * Runs an instant command with `api` and resolves with its output, verbatim (`-ERR no reply`
   * when it printed nothing, mod_event_socket.c api_exec). Cheaper than bgapi on both sides: no
   * thread in FreeSWITCH, no BACKGROUND_JOB event sent to every listener.
   */
  api(command: InstantCommand, timeoutMs?: number): Promise<Result<string, PbxError>>
  /** Executes an application on a channel and resolves on its CHANNEL_EXECUTE_COMPLETE. */
  execute(uuid: string, app: EslApp, timeoutMs?: number): Promise<Result<FsEvent, PbxError>>
  /** Every channel event and BACKGROUND_JOB, in arrival order. Returns an unsubscribe function. */
  onEvent(listener: (event: FsEvent) => void): () => void
  /** Called after every (re)connection once authenticated and subscribed; used to resynchronise. */
  onConnected(listener: () => void): () => void
  close(): Promise<void>
}
