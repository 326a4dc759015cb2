/**
 * A session's fetches: its documents (the first one, inline or from URLs, and every one that
 * replaces it), GetJSON data, the check of prompt URLs FreeSWITCH will download, and the
 * reports that tell a document's URL why it failed (`CallStatus=error`, `Error=<reason>`).
 * Every fetch carries the call parameters, counts against the idle guard and ends at once
 * when the session's signal fires.
 */
import { ABORTED, raceAbort } from '../../util/abort.js'
import { err, ok, type Result } from '../../util/result.js'
import { parseIvrDocument } from '../document/parse.js'
import { GONE, runtimeError, type Outcome } from '../elements/types.js'
import type { FetchError, IvrFetcher } from '../fetch/fetcher.js'
import type { HttpMethod } from '../syntax/types.js'
import { MAX_IDLE_LOADS, type IdleGuard } from './idle-guard.js'

/** How prompts that FreeSWITCH downloads are named (elements/media.ts audioFile). */
const HTTP_CACHE = 'http_cache://'

/** Where the first document comes from. */
export type InitialDocument =
  | { readonly kind: 'inline'; readonly xml: string }
  | { readonly kind: 'urls'; readonly urls: readonly string[] }
  /** Nothing to run (an unknown or expired key): the call is ended. */
  | { readonly kind: 'none'; readonly reason: string }

export interface DocumentsDeps {
  readonly fetcher: IvrFetcher
  readonly signal: AbortSignal
  /** The call parameters of a fetch, as they are now. */
  readonly params: () => Record<string, string>
  readonly guard: IdleGuard
}

const TOO_MANY_LOADS = `more than ${MAX_IDLE_LOADS} fetches without playing anything to the caller (a Redirect loop?)`

export class SessionDocuments {
  private readonly reports: Promise<void>[] = []

  constructor(private readonly d: DocumentsDeps) {}

  /** The first document, as the `replace` outcome; an error when there is none or it is invalid. */
  async first(initial: InitialDocument): Promise<Outcome> {
    switch (initial.kind) {
      case 'none':
        return { kind: 'error', message: initial.reason }
      case 'urls':
        return this.load(initial.urls, 'POST')
      case 'inline': {
        const parsed = parseIvrDocument(initial.xml)
        if (!parsed.ok) return { kind: 'error', message: `the inline document is invalid: ${parsed.error.reason}` }
        return { kind: 'replace', document: { document: parsed.value } }
      }
    }
  }

  /**
   * Fetches a document (comma list = fallbacks), validates it and returns the `replace`
   * outcome; failures are runtime errors, and URLs that sent an invalid document are told why.
   */
  async load(urls: readonly string[], method: HttpMethod): Promise<Outcome> {
    const { signal } = this.d
    if (signal.aborted) return GONE
    if (!this.d.guard.load()) return { kind: 'error', message: TOO_MANY_LOADS }
    const params = this.d.params()
    const r = await raceAbort(this.d.fetcher.fetchDocument(urls, params, method), signal)
    if (r === ABORTED || signal.aborted) return GONE
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

  /** GetJSON: the parsed JSON, or an error message. */
  async json(url: string, method: HttpMethod): Promise<Result<unknown, string>> {
    const { signal } = this.d
    if (signal.aborted) return err('the call ended')
    if (!this.d.guard.load()) return err(TOO_MANY_LOADS)
    const r = await raceAbort(this.d.fetcher.fetchJson(url, this.d.params(), method), signal)
    if (r === ABORTED) return err('the call ended')
    return r.ok ? r : err(r.error.message)
  }

  /** Every `http_cache://<url>` in the files (plain, or inside a `file_string://a!b`) must pass the fetch rules. */
  async checkMedia(files: readonly (string | undefined)[]): Promise<Result<void, Outcome>> {
    const urls = files
      .flatMap((f) => (f ?? '').replace(/^file_string:\/\//, '').split('!'))
      .filter((f) => f.startsWith(HTTP_CACHE))
      .map((f) => f.slice(HTTP_CACHE.length))
    for (const url of urls) {
      const r = await raceAbort(this.d.fetcher.checkTarget(url), this.d.signal)
      if (r === ABORTED) return err(GONE)
      if (!r.ok) return err(runtimeError(`media URL refused: ${r.error.message}`))
    }
    return ok(undefined)
  }

  /** Tells a document's URL why it failed (best effort, in the background: see settled). */
  report(url: string, error: string): void {
    this.reports.push(this.d.fetcher.reportError(url, this.d.params(), error))
  }

  /** Tells a document's URL how the call went (CallStatus=completed at its end); best effort. */
  notify(url: string, params: Readonly<Record<string, string>>): Promise<void> {
    return this.d.fetcher.notify(url, params)
  }

  /** Resolves when every report was sent (or given up). */
  async settled(): Promise<void> {
    await Promise.all(this.reports)
  }

  /** URLs that answered with a document the fetcher's `accept` refused are told why. */
  private reportInvalid(urls: readonly string[], e: FetchError): void {
    const attempts = e.attempts ?? [e]
    attempts.forEach((a, i) => {
      const url = urls[i]
      if (a.kind === 'invalid_body' && url !== undefined) this.report(url, a.message)
    })
  }
}
