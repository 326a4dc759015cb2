/**
 * Test double of the IVR runner's fetcher (FreeSWITCH's is test/support/fake-pbx.ts, whose
 * `script` decides how each application ends):
 * - FakeFetcher: documents and JSON by URL, every request and error report recorded; like the
 *   real fetcher created with `accept: acceptIvrDocument`, an invalid document makes the next
 *   URL of a list be tried.
 */
import { acceptIvrDocument } from '../../../src/ivr/runner/index.js'
import type { FetchedDocument, FetchError, HttpMethod, IvrFetcher } from '../../../src/ivr/fetch/fetcher.js'
import { err, ok, type Result } from '../../../src/util/result.js'

export interface FetchRecord {
  readonly kind: 'document' | 'json'
  readonly urls: readonly string[]
  readonly params: Readonly<Record<string, string>>
  readonly method: HttpMethod
}

const httpError = (url: string, status: number): FetchError => ({ kind: 'http_status', url, status, message: `HTTP ${status}` })

export class FakeFetcher implements IvrFetcher {
  readonly docs = new Map<string, string>()
  readonly json = new Map<string, unknown>()
  readonly requests: FetchRecord[] = []
  readonly reports: Array<{ url: string; params: Readonly<Record<string, string>>; error: string | undefined }> = []

  async fetchDocument(urls: readonly string[], params: Readonly<Record<string, string>>, method: HttpMethod = 'POST'): Promise<Result<FetchedDocument, FetchError>> {
    this.requests.push({ kind: 'document', urls: [...urls], params: { ...params }, method })
    const attempts: FetchError[] = []
    for (const url of urls) {
      const body = this.docs.get(url)
      if (body === undefined) {
        attempts.push(httpError(url, 404))
        continue
      }
      const verdict = acceptIvrDocument(body)
      if (!verdict.ok) {
        attempts.push({ kind: 'invalid_body', url, message: `invalid document: ${verdict.error}` })
        continue
      }
      return ok({ url, requestedUrl: url, body, contentType: 'text/xml' })
    }
    const last = attempts[attempts.length - 1] ?? httpError('', 404)
    return err(attempts.length > 1 ? { ...last, message: attempts.map((a) => a.message).join('; '), attempts } : last)
  }

  async fetchJson(url: string, params: Readonly<Record<string, string>>, method: HttpMethod = 'POST'): Promise<Result<unknown, FetchError>> {
    this.requests.push({ kind: 'json', urls: [url], params: { ...params }, method })
    if (!this.json.has(url)) return err(httpError(url, 500))
    return ok(this.json.get(url))
  }

  async reportError(url: string, params: Readonly<Record<string, string>>, error?: string): Promise<void> {
    this.reports.push({ url, params: { ...params }, error })
  }

  /** The call statuses told to documents' URLs (the end of a call: CallStatus=completed). */
  readonly notices: Array<{ url: string; params: Readonly<Record<string, string>> }> = []

  async notify(url: string, params: Readonly<Record<string, string>>): Promise<void> {
    this.notices.push({ url, params: { ...params } })
  }

  /** Hosts whose media URLs the address guard would refuse. */
  readonly blockedHosts = new Set<string>()

  async checkTarget(url: string): Promise<Result<void, FetchError>> {
    const host = new URL(url).hostname
    return this.blockedHosts.has(host) ? err({ kind: 'blocked_address', url, message: `${host}: not allowed` }) : ok(undefined)
  }
}
