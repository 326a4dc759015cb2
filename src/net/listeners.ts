/**
 * The daemon's HTTP listeners (docs/deploy.md "Listeners"): the API's and the xml_curl one, made
 * by one `newServer()` so that they share every server setting, and their two ends of life:
 * listening, then no new connection, then closed.
 */
import { createServer, type Server } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import { secureContextOptions, type TlsCredentials } from './tls.js'
import { err, ok, type Result } from '../util/result.js'

/**
 * A client has `http.request_timeout_ms` to send a whole request, headers and body: a body
 * trickled byte by byte (slowloris) is cut with 408 then. Node's own defaults (5 min for a
 * request, 1 min for headers, checked every 30 s) would let a few hundred such connections
 * hold the listener for minutes. The check runs every second so the bound is the setting
 * (+1 s), not the setting plus 30 s. Idle keep-alive connections close after Node's 5 s.
 */
export const newServer = (http: { readonly request_timeout_ms: number }, tls?: TlsCredentials): Server => {
  const timeouts = { requestTimeout: http.request_timeout_ms, headersTimeout: http.request_timeout_ms, connectionsCheckingInterval: 1000 }
  if (tls === undefined) return createServer(timeouts)
  // With `http.tls` (the API listener only): the handshake comes before the request's clock
  // starts, so it gets the same bound rather than Node's 120 s.
  return createHttpsServer({ ...timeouts, ...secureContextOptions(tls), handshakeTimeout: http.request_timeout_ms })
}

/** A server listening: its port, and its two steps of closing. */
export interface Listening {
  readonly port: number
  /** No new connection; requests under way finish, idle keep-alive connections close now. */
  stopAccepting(): void
  /** `stopAccepting()` if not yet, then every connection cut; resolves once the server is closed. */
  close(): Promise<void>
}

/** Listens on `host:port`; the reason, named after the listener, when it cannot. */
export async function listenOn(name: string, server: Server, host: string, port: number): Promise<Result<Listening, string[]>> {
  try {
    const bound = await new Promise<number>((resolve, reject) => {
      server.once('error', reject)
      server.listen(port, host, () => {
        server.off('error', reject)
        resolve((server.address() as AddressInfo).port)
      })
    })
    let closed: Promise<void> | undefined
    const stopAccepting = (): Promise<void> => {
      closed ??= new Promise<void>((resolve) => server.close(() => resolve()))
      server.closeIdleConnections()
      return closed
    }
    return ok({
      port: bound,
      stopAccepting: () => void stopAccepting(),
      close: () => {
        const done = stopAccepting()
        server.closeAllConnections()
        return done
      },
    })
  } catch (e) {
    return err([`${name}: cannot listen on ${host}:${port}: ${(e as Error).message}`])
  }
}

/** Whether a listen address only accepts connections from this host. */
export const isLoopbackHost = (host: string): boolean => host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host)
