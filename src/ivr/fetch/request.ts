/**
 * One HTTP exchange with the checked addresses: the connection pinned to them (a fresh socket
 * per request, never pooled), the Host header and the TLS server name (SNI and certificate
 * check) kept as the URL's host name, no compression (the size cap then counts the bytes that
 * are parsed: no zip bombs), and the body cut off as soon as it passes the cap. A redirect is
 * returned for the caller to check and follow; any other non-2xx status is a failure.
 */
import http from 'node:http'
import https from 'node:https'
import { isIP } from 'node:net'
import { err, ok, type Result } from '../../util/result.js'
import { fetchError, type FetchError } from './errors.js'
import { pinnedLookup, type PinnedAddress } from './pinned-address.js'
import type { HttpMethod, HttpSettings } from './types.js'
import { bareHost, redact } from './urls.js'

const REDIRECTS = new Set([301, 302, 303, 307, 308])

/** What one request gave: a redirect to follow, or a 2xx body. */
export type Hop =
  | { readonly kind: 'redirect'; readonly status: number; readonly location: string }
  | { readonly kind: 'body'; readonly status: number; readonly contentType: string; readonly bytes: Buffer }

export interface HopRequest {
  readonly url: URL
  readonly addresses: readonly PinnedAddress[]
  readonly method: HttpMethod
  /** The form-encoded POST body; undefined for a GET. */
  readonly body: string | undefined
  readonly acceptHeader: string
  /** Aborted when the URL's overall timeout expires. */
  readonly signal: AbortSignal
}

export function requestOnce(r: HopRequest, s: HttpSettings): Promise<Result<Hop, FetchError>> {
  const { url, addresses, method, body, acceptHeader, signal } = r
  return new Promise((resolve) => {
    const shown = redact(url)
    let settled = false
    const headers: Record<string, string> = {
      host: url.host,
      'user-agent': s.userAgent,
      accept: acceptHeader,
      // No compression: the size cap then counts the bytes that are parsed (no zip bombs).
      'accept-encoding': 'identity',
      connection: 'close',
    }
    if (body !== undefined) {
      headers['content-type'] = 'application/x-www-form-urlencoded'
      headers['content-length'] = String(Buffer.byteLength(body))
    }
    const host = bareHost(url)
    const options: https.RequestOptions = {
      host,
      port: url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port),
      path: `${url.pathname}${url.search}`,
      method,
      headers,
      // A fresh connection per request: a pooled socket would skip the per-request pinning.
      agent: false,
      lookup: pinnedLookup(addresses),
    }
    if (url.username !== '' || url.password !== '') {
      options.auth = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`
    }
    if (url.protocol === 'https:') {
      // SNI and the certificate check use the host name, never the pinned address.
      if (isIP(host) === 0) options.servername = host
      if (s.ca !== undefined) options.ca = typeof s.ca === 'string' || Buffer.isBuffer(s.ca) ? s.ca : [...s.ca]
    }
    const finish = (result: Result<Hop, FetchError>): void => {
      if (settled) return
      settled = true
      signal.removeEventListener('abort', onAbort)
      resolve(result)
    }
    const onAbort = (): void => {
      finish(err(fetchError('timeout', shown, `no complete answer within ${s.timeoutMs} ms`)))
      req.destroy()
    }
    const req = (url.protocol === 'https:' ? https : http).request(options, (res) => {
      const status = res.statusCode ?? 0
      const location = res.headers.location
      if (REDIRECTS.has(status) && location !== undefined) {
        finish(ok({ kind: 'redirect', status, location }))
        res.destroy()
        return
      }
      if (status < 200 || status > 299) {
        finish(err(fetchError('http_status', shown, `HTTP ${status}${res.statusMessage ? ` ${res.statusMessage.slice(0, 80)}` : ''}`, status)))
        res.destroy()
        return
      }
      const encoding = res.headers['content-encoding']
      if (encoding !== undefined && encoding.toLowerCase() !== 'identity') {
        finish(err(fetchError('invalid_body', shown, `unsupported Content-Encoding "${encoding.slice(0, 40)}"`)))
        res.destroy()
        return
      }
      const declared = Number(res.headers['content-length'])
      if (Number.isFinite(declared) && declared > s.maxBytes) {
        finish(err(fetchError('too_large', shown, `body of ${declared} bytes is larger than ${s.maxBytes} bytes`)))
        res.destroy()
        return
      }
      const chunks: Buffer[] = []
      let size = 0
      let ended = false
      res.on('data', (chunk: Buffer) => {
        size += chunk.length
        if (size > s.maxBytes) {
          finish(err(fetchError('too_large', shown, `body is larger than ${s.maxBytes} bytes`)))
          res.destroy()
          return
        }
        chunks.push(chunk)
      })
      res.on('end', () => {
        ended = true
        finish(ok({ kind: 'body', status, contentType: res.headers['content-type'] ?? '', bytes: Buffer.concat(chunks, size) }))
      })
      res.on('error', (e) => finish(err(fetchError('network', shown, `connection failed while reading the body: ${e.message}`))))
      res.on('close', () => {
        if (!ended) finish(err(fetchError('network', shown, 'connection closed before the body ended')))
      })
    })
    req.on('error', (e: NodeJS.ErrnoException) => {
      finish(err(fetchError('network', shown, `${e.code ?? 'error'}: ${e.message}`)))
    })
    if (signal.aborted) {
      onAbort()
      return
    }
    signal.addEventListener('abort', onAbort, { once: true })
    req.end(body)
  })
}
