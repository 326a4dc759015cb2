/**
 * A minimal ESL server for connection tests, framing messages as FreeSWITCH does (sessions 01,
 * 04, 06, 22 in test/fixtures/freeswitch/esl/): auth/request first, command/reply for commands,
 * text/event-json events with Content-Length, BACKGROUND_JOB carrying `_body`. The test scripts
 * what bgapi jobs answer.
 */
import { createServer, type Server, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'
import { Readable } from 'node:stream'
import { EslReader } from '../../src/pbx/esl-reader.js'

export interface MiniEsl {
  readonly port: number
  /** Every command line received (auth included), in order. */
  readonly received: string[]
  /** Job bodies by command (first word); default `+OK\n`. A function may delay by returning a promise. */
  jobBody: (command: string) => string | undefined | Promise<string | undefined>
  /** Do not answer commands matching this (simulates a stalled FreeSWITCH). */
  stall: (command: string) => boolean
  /** Reads nothing and writes nothing until thaw(), as a FreeSWITCH under SIGSTOP. */
  freeze(): void
  /** Resumes: what arrived meanwhile is read and answered, in order. */
  thaw(): void
  /**
   * What FreeSWITCH 1.10.12 sends on `fsctl shutdown` (test/fixtures/freeswitch/esl/26-fsctl-shutdown.txt):
   * the SHUTDOWN event, then (after `noticeAfterMs`) the disconnect notice, and it closes.
   */
  shutdown(noticeAfterMs: number): void
  /** The disconnect notice alone, the socket left open. */
  sendNotice(): void
  sendEvent(headers: Record<string, string>): void
  /** Bytes as they are (e.g. a piece of a message: TCP may deliver one in two chunks). */
  sendRaw(bytes: string): void
  dropAll(): void
  connections(): number
  close(): Promise<void>
}

/**
 * What the daemon's reader hands on for these chunks, each emitted as the socket's 'data': one
 * log line per message, in the order handed on; `destroyed: ...` when it drops the socket.
 */
export function readMessages(chunks: readonly Buffer[], takeEvent: (body: string) => boolean = () => true): string[] {
  const source = new Readable({ read() {} })
  const log: string[] = []
  source.on('error', () => {})
  new EslReader(source, {
    event: (body) => {
      const text = body.toString('utf8')
      if (!takeEvent(text)) return false
      log.push(`event ${text}`)
      return true
    },
    reply: (headers, body) => log.push(`reply ${headers === undefined ? '(api)' : JSON.stringify(headers.toString())} ${JSON.stringify(body.toString())}`),
    authRequest: () => log.push('auth/request'),
    disconnectNotice: () => log.push('disconnect-notice'),
  })
  for (const c of chunks) if (!source.destroyed) source.emit('data', c)
  if (source.destroyed) log.push(`destroyed: ${source.errored?.message ?? 'no error'}`)
  return log
}

export const frameEvent = (obj: Record<string, string>): string => {
  const json = JSON.stringify(obj)
  return `Content-Length: ${Buffer.byteLength(json)}\nContent-Type: text/event-json\n\n${json}`
}

export async function startMiniEsl(password = 'ClueCon'): Promise<MiniEsl> {
  const sockets = new Set<Socket>()
  const authed = new Set<Socket>()
  let total = 0
  let frozen = false
  const onThaw: Array<() => void> = []
  /** Writes now, or once thawed. */
  const write = (socket: Socket, text: string) => {
    if (frozen) onThaw.push(() => write(socket, text))
    else if (!socket.destroyed) socket.write(text)
  }
  const esl: MiniEsl = {
    port: 0,
    received: [],
    jobBody: () => '+OK\n',
    stall: () => false,
    freeze() {
      frozen = true
    },
    thaw() {
      frozen = false
      for (const f of onThaw.splice(0)) f()
    },
    shutdown(noticeAfterMs) {
      esl.sendEvent({ 'Event-Name': 'SHUTDOWN', 'Event-Calling-File': 'switch_core.c', 'Event-Calling-Function': 'switch_core_destroy', 'Event-Info': 'System Shutting Down' })
      setTimeout(() => {
        const notice = 'The system is being shut down.\n'
        for (const s of sockets) {
          s.write(`Content-Type: text/disconnect-notice\nContent-Length: ${Buffer.byteLength(notice)}\n\n${notice}`)
          s.end()
        }
      }, noticeAfterMs)
    },
    sendNotice() {
      const notice = 'The system is being shut down.\n'
      for (const s of authed) write(s, `Content-Type: text/disconnect-notice\nContent-Length: ${Buffer.byteLength(notice)}\n\n${notice}`)
    },
    sendRaw(bytes) {
      for (const s of authed) write(s, bytes)
    },
    sendEvent(headers) {
      for (const s of authed) write(s, frameEvent(headers))
    },
    dropAll() {
      for (const s of sockets) s.destroy()
      sockets.clear()
      authed.clear()
    },
    connections: () => total,
    close: async () => {
      esl.dropAll()
      await new Promise<void>((r) => server.close(() => r()))
    },
  }
  const server: Server = createServer((socket) => {
    sockets.add(socket)
    total += 1
    socket.on('close', () => {
      sockets.delete(socket)
      authed.delete(socket)
    })
    socket.on('error', () => {})
    socket.write('Content-Type: auth/request\n\n')
    let buf = ''
    const onData = (chunk: Buffer) => {
      if (frozen) {
        onThaw.push(() => onData(chunk))
        return
      }
      buf += chunk.toString('utf8')
      for (;;) {
        const end = buf.indexOf('\n\n')
        if (end < 0) break
        const message = buf.slice(0, end)
        buf = buf.slice(end + 2)
        const [line = '', ...headerLines] = message.split('\n')
        const headers = new Map(headerLines.map((h) => [h.slice(0, h.indexOf(':')).toLowerCase(), h.slice(h.indexOf(':') + 1).trim()]))
        const length = Number(headers.get('content-length') ?? '0')
        if (length > 0) {
          if (Buffer.byteLength(buf) < length) {
            // wait for the whole body (tests send short ASCII bodies)
            buf = `${message}\n\n${buf}`
            break
          }
          buf = buf.slice(length)
        }
        esl.received.push(line)
        const reply = (text: string, extra = '') => write(socket, `Content-Type: command/reply\nReply-Text: ${text}\n${extra}\n`)
        if (line.startsWith('auth ')) {
          if (line.slice(5) === password) {
            authed.add(socket)
            reply('+OK accepted')
          } else {
            reply('-ERR invalid')
            socket.end()
          }
        } else if (!authed.has(socket)) {
          reply('-ERR command not found')
        } else if (line.startsWith('event json')) {
          if (esl.stall(line)) continue
          reply('+OK event listener enabled json')
        } else if (line.startsWith('bgapi ')) {
          const command = line.slice(6)
          if (esl.stall(command)) continue
          const job = headers.get('job-uuid') ?? 'job'
          reply(`+OK Job-UUID: ${job}`, `Job-UUID: ${job}\n`)
          void Promise.resolve(esl.jobBody(command)).then((body) => {
            if (body === undefined || socket.destroyed) return
            write(
              socket,
              frameEvent({ 'Event-Name': 'BACKGROUND_JOB', 'Job-UUID': job, 'Job-Command': command.split(' ')[0] ?? '', 'Content-Length': String(Buffer.byteLength(body)), _body: body }),
            )
          })
        } else if (line.startsWith('sendmsg ')) {
          reply('+OK')
          const uuid = line.slice(8)
          const app = headers.get('execute-app-name') ?? ''
          const eventUuid = headers.get('event-uuid') ?? ''
          write(socket, frameEvent({ 'Event-Name': 'CHANNEL_EXECUTE_COMPLETE', 'Unique-ID': uuid, Application: app, 'Application-UUID': eventUuid, 'Application-Response': '_none_' }))
        } else {
          reply('-ERR command not found')
        }
      }
    }
    socket.on('data', onData)
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  ;(esl as { port: number }).port = (server.address() as AddressInfo).port
  return esl
}
