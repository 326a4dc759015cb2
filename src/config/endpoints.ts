/**
 * Where the daemon's listeners are reached, from their configuration: one formula for the
 * daemon (which hands its in-process simulator the xml_curl URL), the standalone simulator
 * (which derives it from the daemon's file) and the docs (docs/deploy.md "Listeners":
 * `http://<xml_curl.host>:<xml_curl.port><xml_curl.path>/xml_curl`).
 */
import type { DaemonConfig } from './schema.js'

/** A listen address as the host of a URL: a wildcard is reached on loopback; IPv6 in brackets. */
export function urlHostOf(listenHost: string): string {
  const host = listenHost === '0.0.0.0' || listenHost === '' ? '127.0.0.1' : listenHost === '::' ? '::1' : listenHost
  return host.includes(':') ? `[${host}]` : host
}

/** `http://host:port` of a listener (`https://` for the API listener with `http.tls`). */
export const originOf = (listenHost: string, port: number, scheme: 'http' | 'https' = 'http'): string => `${scheme}://${urlHostOf(listenHost)}:${port}`

/** The path mod_xml_curl posts to: `<xml_curl.path>/xml_curl`. */
export const xmlCurlPathOf = (d: Pick<DaemonConfig, 'xml_curl'>): string => `${d.xml_curl.path}/xml_curl`

/**
 * The URL of the xml_curl binding: `xml_curl.base_url` when the operator wrote one (FreeSWITCH
 * reaches the daemon through a proxy or a container name), else the xml_curl listener itself,
 * on `port` (the port it actually got when `xml_curl.port` is 0).
 */
export function xmlCurlUrlOf(d: Pick<DaemonConfig, 'xml_curl'>, port: number = d.xml_curl.port): string {
  const base = d.xml_curl.base_url?.replace(/\/+$/, '') ?? originOf(d.xml_curl.host, port)
  return `${base}${xmlCurlPathOf(d)}`
}
