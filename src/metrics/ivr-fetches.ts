/**
 * IVR fetches by outcome, without a hook inside the fetcher: daemon.ts hands the IVR runner
 * this decorator of its IvrFetcher, which counts each fetch's result (`ok` or the FetchError
 * kind, a fixed set: ivr/fetch/errors.ts) and returns it unchanged.
 */
import type { IvrFetcher } from '../ivr/fetch/types.js'
import type { Result } from '../util/result.js'
import type { IvrFetchKind as Kind } from './known-labels.js'

export function countingFetcher(fetcher: IvrFetcher, count: (kind: Kind, outcome: string) => void): IvrFetcher {
  const counted = async <T, E extends { readonly kind: string }>(kind: Kind, p: Promise<Result<T, E>>): Promise<Result<T, E>> => {
    const r = await p
    count(kind, r.ok ? 'ok' : r.error.kind)
    return r
  }
  return {
    fetchDocument: (urls, params, method) => counted('document', fetcher.fetchDocument(urls, params, method)),
    fetchJson: (url, params, method) => counted('json', fetcher.fetchJson(url, params, method)),
    checkTarget: (url) => counted('play_url', fetcher.checkTarget(url)),
    reportError: (url, params, error) => fetcher.reportError(url, params, error),
    notify: (url, params) => fetcher.notify(url, params),
  }
}
