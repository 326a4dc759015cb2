/**
 * A mod_xml_curl client: the POST FreeSWITCH makes to the binding's URL (requests 02, 04, 05 in
 * test/fixtures/freeswitch/xml_curl/): `POST <path>` with User-Agent `freeswitch-xml/1.0`, `Accept:
 * *\/*`, a form of `hostname, section, tag_name, key_name, key_value` and then the request's event
 * headers, keys raw and values switch_url_encode'd (switch_event_build_param_string), and Basic
 * auth when the binding has credentials.
 *
 * Results follow mod_xml_curl.c: an HTTP status other than 200, an empty body or an unparsable
 * one are errors, after which FreeSWITCH uses its static XML (requests 13, 14, 15 in
 * test/fixtures/freeswitch/xml_curl/).
 */
import http from 'node:http'
import https from 'node:https'
import type { Logger } from '../../util/logger.js'
import type { Headers } from '../model/events.js'
import { urlEncode } from '../text/fs-strings.js'

export interface XmlCurlBinding {
  readonly url: string
  readonly username: string
  readonly password: string
  /** mod_xml_curl's `timeout` binding parameter (seconds); not scaled by timeScale. */
  readonly timeoutSec?: number
}

export interface XmlCurlQuery {
  readonly hostname: string
  readonly section: 'dialplan' | 'directory'
  readonly tagName: string
  readonly keyName: string
  readonly keyValue: string
  readonly params: Headers
}

export type XmlCurlResult = { readonly ok: true; readonly body: string } | { readonly ok: false; readonly reason: string }

function buildForm(q: XmlCurlQuery): string {
  const parts = [
    `hostname=${urlEncode(q.hostname)}`,
    `section=${urlEncode(q.section)}`,
    `tag_name=${urlEncode(q.tagName)}`,
    `key_name=${urlEncode(q.keyName)}`,
    `key_value=${urlEncode(q.keyValue)}`,
  ]
  for (const [k, v] of q.params) parts.push(`${k}=${urlEncode(v)}`)
  return parts.join('&')
}

export async function xmlCurlFetch(binding: XmlCurlBinding, q: XmlCurlQuery, logger?: Logger, signal?: AbortSignal): Promise<XmlCurlResult> {
  let url: URL
  try {
    url = new URL(binding.url)
  } catch {
    return { ok: false, reason: 'invalid binding URL' }
  }
  const body = Buffer.from(buildForm(q))
  const client = url.protocol === 'https:' ? https : http
  const auth = Buffer.from(`${binding.username}:${binding.password}`).toString('base64')
  return new Promise<XmlCurlResult>((resolve) => {
    const req = client.request(
      url,
      {
        method: 'POST',
        headers: {
          Host: url.host,
          Authorization: `Basic ${auth}`,
          'User-Agent': 'freeswitch-xml/1.0',
          Accept: '*/*',
          'Content-Length': String(body.length),
          'Content-Type': 'application/x-www-form-urlencoded',
        },
        timeout: (binding.timeoutSec ?? 5) * 1000,
        agent: false,
        ...(signal !== undefined ? { signal } : {}),
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8')
          if (res.statusCode !== 200) {
            // mod_xml_curl.c: "Received HTTP error %ld trying to fetch %s"
            logger?.warn({ status: res.statusCode, section: q.section }, 'sim xml_curl: HTTP error')
            resolve({ ok: false, reason: `HTTP ${res.statusCode ?? 0}` })
          } else if (text.trim() === '') {
            // mod_xml_curl.c: "Error Parsing Result!"
            // (test/fixtures/freeswitch/xml_curl/14-empty-200-directory.txt)
            resolve({ ok: false, reason: 'empty body' })
          } else resolve({ ok: true, body: text })
        })
        res.on('error', (e) => resolve({ ok: false, reason: e.message }))
      },
    )
    req.on('timeout', () => req.destroy(new Error('timeout')))
    req.on('error', (e) => {
      logger?.warn({ err: e.message, section: q.section }, 'sim xml_curl: request failed')
      resolve({ ok: false, reason: e.message })
    })
    req.end(body)
  })
}
