/**
 * A CTI client for the hostile suite (the `ws` package, as a server-side subscriber would be):
 * collects every message, answers `command()` with the result frame of the same id, and
 * `ticket()` gets a gen_ws_ticket ticket for a URI with a domain's token.
 */
import WebSocket from 'ws'
import { AUTH_ALPHA, apiPost, type World } from './world.js'

export type Message = Record<string, unknown> & { type: string }

export interface CtiClient {
  readonly messages: Message[]
  /** Every channel uuid this connection was ever shown (initial_info and info_event). */
  readonly seen: Set<string>
  command(frame: Record<string, unknown>): Promise<Message>
  close(): Promise<void>
}

let ids = 0

export function openCti(w: World, pathAndQuery: string, headers: Record<string, string> = {}): Promise<CtiClient> {
  const url = `${w.api.replace(/^http/, 'ws')}${pathAndQuery}`
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers, handshakeTimeout: 10000 })
    const messages: Message[] = []
    const seen = new Set<string>()
    const waiting = new Map<string, (m: Message) => void>()
    ws.on('message', (data: Buffer) => {
      const m = JSON.parse(data.toString('utf8')) as Message
      messages.push(m)
      const channels = m.type === 'initial_info' ? (m.channels as Array<{ uuid: string }>) : m.type === 'info_event' ? [m.channel as { uuid: string }] : []
      for (const c of channels) seen.add(c.uuid)
      if (m.type === 'result') waiting.get(String(m.id))?.(m)
    })
    ws.once('unexpected-response', (_req, res) => reject(new Error(`${pathAndQuery}: upgrade refused ${res.statusCode ?? 0}`)))
    ws.once('error', reject)
    ws.once('open', () => {
      const client: CtiClient = {
        messages,
        seen,
        command: (frame) =>
          new Promise((res, rej) => {
            const id = `c${++ids}`
            const timer = setTimeout(() => rej(new Error(`no result for ${JSON.stringify(frame).slice(0, 100)}`)), 10000)
            waiting.set(id, (m) => {
              clearTimeout(timer)
              waiting.delete(id)
              res(m)
            })
            ws.send(JSON.stringify({ ...frame, id }))
          }),
        close: () =>
          new Promise((res) => {
            if (ws.readyState === WebSocket.CLOSED) return res()
            ws.once('close', () => res())
            ws.close()
            setTimeout(() => {
              ws.terminate()
              res()
            }, 3000).unref()
          }),
      }
      resolve(client)
    })
  })
}

/** A ticket for `uri` from gen_ws_ticket, asked with `auth` (alpha's token by default). */
export async function ticket(w: World, uri: string, auth = AUTH_ALPHA): Promise<string> {
  const a = await w.send(apiPost('gen_ws_ticket', { uri }, auth))
  const body = JSON.parse(a.text) as { ticket?: unknown }
  if (a.status !== 200 || typeof body.ticket !== 'string') throw new Error(`gen_ws_ticket ${uri}: ${a.status} ${a.text}`)
  return body.ticket
}
