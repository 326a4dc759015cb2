/**
 * URLs as the fetcher takes them: comma lists split, http/https only with a host, IPv6 hosts
 * bare for requests and lookups, and user info stripped from every URL a message or a log
 * shows.
 */
import { err, ok, type Result } from '../../util/result.js'
import { fetchError, type FetchError } from './errors.js'

/**
 * Split a comma list of URLs ("a, b,c") into its entries; empty entries are dropped.
 * @internal Exported for tests: test/ivr/fetch checks the list syntax.
 */
export const splitUrlList = (text: string): string[] =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0)

/** A URL without its user info, for messages and logs. */
export const redact = (url: URL): string => {
  if (url.username === '' && url.password === '') return url.href
  const copy = new URL(url.href)
  copy.username = ''
  copy.password = ''
  return copy.href
}

export const redactRaw = (raw: string): string => {
  try {
    return redact(new URL(raw))
  } catch {
    // Not a URL: cut anything that looks like user info and keep it short.
    return raw.replace(/\/\/[^/@]*@/, '//').slice(0, 200)
  }
}

/** An http(s) URL with a host; relative to `base` when given (a redirect's Location). */
export const parseHttpUrl = (raw: string, base?: URL): Result<URL, FetchError> => {
  let url: URL
  try {
    url = base === undefined ? new URL(raw) : new URL(raw, base)
  } catch {
    return err(fetchError('bad_url', redactRaw(raw), `not a valid URL: ${JSON.stringify(redactRaw(raw).slice(0, 100))}`))
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return err(fetchError('bad_url', redact(url), `scheme ${url.protocol} is not allowed (http and https only)`))
  }
  if (url.hostname === '') return err(fetchError('bad_url', redact(url), 'URL has no host'))
  return ok(url)
}
