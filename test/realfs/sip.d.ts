/**
 * The part of the npm `sip` package (a SIP stack in JavaScript, no types of its own) that the
 * real-FreeSWITCH lane's phones use.
 */
declare module 'sip' {
  export interface SipUri {
    schema?: string
    user?: string
    host: string
    port?: number
    params: Record<string, string | null | undefined>
  }
  export interface NameAddr {
    name?: string
    uri: string
    params: Record<string, string | null | undefined>
  }
  export interface SipMessage {
    method?: string
    uri?: string
    status?: number
    reason?: string
    version?: string
    headers: {
      to: NameAddr
      from: NameAddr
      'call-id': string
      cseq: { seq: number; method: string }
      contact?: Array<{ uri: string; params?: Record<string, string | null | undefined> }>
      via?: unknown[]
      route?: unknown
      [name: string]: unknown
    }
    content?: string
  }
  export interface Stack {
    send(m: SipMessage, onResponse?: (rs: SipMessage) => void): void
    destroy(): void
  }
  export interface StackOptions {
    address?: string
    publicAddress?: string
    hostname?: string
    port?: number
    udp?: boolean
    tcp?: boolean
    logger?: { error?: (e: unknown) => void }
  }
  export function create(options: StackOptions, onRequest: (rq: SipMessage, remote: unknown) => void): Stack
  export function makeResponse(rq: SipMessage, status: number, reason: string): SipMessage
  export function parseUri(uri: string): SipUri
  export function generateBranch(): string
}

declare module 'sip/digest.js' {
  import type { SipMessage } from 'sip'
  export function signRequest(ctx: object | undefined, rq: SipMessage, rs: SipMessage, creds: { user: string; password: string }): unknown
}
