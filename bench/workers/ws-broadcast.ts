/**
 * The fan-out benchmark's baseline: a bare `ws` server that broadcasts given frames to every
 * connected client the plain way (each frame encoded once, `send` of the same Buffer to every
 * client), at a given rate. Its CPU per frame per client is what merely pushing the same bytes
 * to the same number of sockets costs with the library the daemon uses.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import WebSocket, { WebSocketServer } from 'ws'
import { memory, ready, serve } from './rpc.js'

const server = createServer()
const wss = new WebSocketServer({ server })
let frames: Buffer[] = []
await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))

serve(
  {
    frames: (m) => {
      frames = (m.frames as string[]).map((f) => Buffer.from(f, 'utf8'))
      return frames.length
    },
    /**
     * Sends `rate` frames a second (the captured ones in turn) to every client for `durationMs`;
     * returns frames sent. `mode`: `shared` (the baseline: the same Buffer to every client), or
     * the daemon's two ways of giving each client its own head (`{"type":"info_event","seq":N,
     * "event":...,"channel":`) before the shared channel bytes: `fragments` (head and channel as
     * two fragments of one message, the hub until issue 32) and `copy` (one message per client,
     * the head and a copy of the channel bytes, the hub since), to tell what each costs in the
     * same run.
     */
    broadcast: async (m) => {
      const rate = Number(m.rate)
      const durationMs = Number(m.durationMs)
      const mode = String(m.mode ?? 'shared')
      if (frames.length === 0) throw new Error('no frames')
      const split = frames.map((f) => {
        const at = f.indexOf('"channel":') + '"channel":'.length
        return { event: /"event":"(\w+)"/.exec(f.subarray(0, at).toString('latin1'))?.[1] ?? 'updated', tail: f.subarray(at) }
      })
      const seqs = new Map<WebSocket, number>()
      const t0 = performance.now()
      let sent = 0
      while (performance.now() - t0 < durationMs) {
        const due = Math.floor(((performance.now() - t0) / 1000) * rate)
        for (; sent < due; sent++) {
          const i = sent % frames.length
          const f = frames[i] as Buffer
          const { event, tail } = split[i] as { event: string; tail: Buffer }
          for (const c of wss.clients) {
            if (c.readyState !== WebSocket.OPEN) continue
            if (mode === 'shared') {
              c.send(f)
              continue
            }
            const seq = (seqs.get(c) ?? 0) + 1
            seqs.set(c, seq)
            const head = `{"type":"info_event","seq":${seq},"event":"${event}","channel":`
            if (mode === 'fragments') {
              c.send(head, { binary: false, fin: false })
              c.send(tail, { binary: false, fin: true })
            } else {
              const frame = Buffer.allocUnsafe(head.length + tail.length)
              frame.write(head, 0, 'latin1')
              tail.copy(frame, head.length)
              c.send(frame, { binary: false })
            }
          }
        }
        await new Promise((r) => setTimeout(r, 10))
      }
      return sent
    },
    clients: () => wss.clients.size,
    memory: () => memory(),
    cpu: () => process.cpuUsage(),
  },
  () =>
    new Promise<void>((r) => {
      for (const c of wss.clients) c.terminate()
      server.close(() => r())
    }),
)
await ready({ url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}/` })
