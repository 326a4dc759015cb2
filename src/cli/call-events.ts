/**
 * The CTI side of `cod call`: a `full_events=true` connection (docs/cti.md) opened before the
 * request is sent, so no event of the call can be missed, and the rule that picks the request's
 * channels out of the domain's and says when the call is over.
 *
 * The request's channels: those whose uuid the reply listed, then every channel carrying the
 * same request_id (a hunt's next member, a user's bridged leg carries the request's end_user
 * but its own request_id may be null, so `other_uuid` links count too). The call is over once
 * every channel seen has been removed and none came within a grace period (a bridge or the next
 * member of a hunt is added while, or just after, the previous leg goes).
 */
import WebSocket from 'ws'

/** The channel fields `cod call` shows (docs/cti.md "The channel object"). */
export interface CtiChannel {
  readonly uuid: string
  readonly direction: string | null
  readonly state: string | null
  readonly calling_number: string | null
  readonly called_number: string | null
  readonly other_uuid: string | null
  readonly request_id: string | null
  readonly hangup_cause: string | null
}

export interface ChannelEvent {
  readonly event: 'added' | 'updated' | 'removed'
  readonly channel: CtiChannel
  /** The frame as received. */
  readonly raw: string
}

export type CtiOpenError = { readonly kind: 'refused'; readonly status: number; readonly body: string } | { readonly kind: 'failed'; readonly message: string }

export interface CtiFeed {
  /** Every info_event from the connection's start (buffered until read). */
  next(timeoutMs: number): Promise<ChannelEvent | 'timeout' | 'closed'>
  close(): void
}

/** Opens the connection and waits for its initial_info (or its refusal). */
export function openCtiFeed(url: string, authorization: string, timeoutMs: number): Promise<{ ok: true; feed: CtiFeed } | { ok: false; error: CtiOpenError }> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { headers: { authorization }, handshakeTimeout: timeoutMs })
    const queue: ChannelEvent[] = []
    let waiter: (() => void) | undefined
    let closed = false
    let admitted = false
    const wake = () => {
      const w = waiter
      waiter = undefined
      w?.()
    }
    const feed: CtiFeed = {
      async next(ms) {
        const deadline = Date.now() + ms
        while (queue.length === 0) {
          if (closed) return 'closed'
          const left = deadline - Date.now()
          if (left <= 0) return 'timeout'
          await new Promise<void>((r) => {
            const timer = setTimeout(r, left)
            waiter = () => {
              clearTimeout(timer)
              r()
            }
          })
        }
        return queue.shift() as ChannelEvent
      },
      close() {
        ws.close()
      },
    }
    ws.on('unexpected-response', (_req, res) => {
      let body = ''
      res.on('data', (c: Buffer) => (body += c.toString('utf8')))
      res.on('end', () => resolve({ ok: false, error: { kind: 'refused', status: res.statusCode ?? 0, body } }))
    })
    ws.on('error', (e) => {
      if (!admitted) resolve({ ok: false, error: { kind: 'failed', message: e.message } })
    })
    ws.on('close', () => {
      closed = true
      if (!admitted) resolve({ ok: false, error: { kind: 'failed', message: 'the connection closed before its initial_info' } })
      wake()
    })
    ws.on('message', (data) => {
      const raw = String(data)
      let msg: { type?: unknown; event?: unknown; channel?: unknown; description?: unknown }
      try {
        msg = JSON.parse(raw) as typeof msg
      } catch {
        return
      }
      if (msg.type === 'initial_info') {
        admitted = true
        resolve({ ok: true, feed })
      } else if (msg.type === 'system' && !admitted) {
        resolve({ ok: false, error: { kind: 'failed', message: `${String(msg.event)}: ${String(msg.description)}` } })
      } else if (msg.type === 'info_event' && (msg.event === 'added' || msg.event === 'updated' || msg.event === 'removed')) {
        queue.push({ event: msg.event, channel: msg.channel as CtiChannel, raw })
        wake()
      }
    })
  })
}

/** Which channels belong to the request, and whether all of them are gone. */
export class RequestChannels {
  private readonly uuids: Set<string>
  private readonly requestIds = new Set<string>()
  private readonly live = new Set<string>()
  private seen = 0

  constructor(replyUuids: readonly string[]) {
    this.uuids = new Set(replyUuids)
  }

  /** Takes an event in; true when it concerns the request. */
  take(e: ChannelEvent): boolean {
    const c = e.channel
    const ours =
      this.uuids.has(c.uuid) ||
      (c.request_id !== null && this.requestIds.has(c.request_id)) ||
      (c.other_uuid !== null && this.uuids.has(c.other_uuid))
    if (!ours) return false
    this.uuids.add(c.uuid)
    if (c.request_id !== null) this.requestIds.add(c.request_id)
    if (e.event === 'removed') this.live.delete(c.uuid)
    else if (!this.live.has(c.uuid)) {
      this.live.add(c.uuid)
      this.seen++
    }
    return true
  }

  /** At least one channel was seen and none is live. */
  get over(): boolean {
    return this.seen > 0 && this.live.size === 0
  }
}
