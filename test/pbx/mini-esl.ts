/**
 * A minimal ESL server for connection tests, framing messages as FreeSWITCH does (sessions 01,
 * 04, 06, 22 in test/fixtures/freeswitch/esl/): auth/request first, command/reply for commands,
 * text/event-json events with Content-Length, BACKGROUND_JOB carrying `_body`. The test scripts
 * what bgapi jobs answer.
 */
import { createServer, type Server, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'

export interface MiniEsl {
  readonly port: number
  /** Every command line received (auth included), in order. */
  readonly received: string[]
  /** Job bodies by command (first word); default `+OK\n`. A function may delay by returning a promise. */
  jobBody: (command: string) => string | undefined | Promise<string | undefined>
  /** Do not answer commands matching this (simulates a stalled FreeSWITCH). */
  stall: (command: string) => boolean
  sendEvent(headers: Record<string, string>): void
  dropAll(): void
  connections(): number
  close(): Promise<void>
}

const frameEvent = (obj: Record<string, string>): string => {
  const json = JSON.stringify(obj)
  return `Content-Length: ${Buffer.byteLength(json)}\nContent-Type: text/event-json\n\n${json}`
}

export async function startMiniEsl(password = 'ClueCon'): Promise<MiniEsl> {
  const sockets = new Set<Socket>()
  const authed = new Set<Socket>()
  let total = 0
  const esl: MiniEsl = {
    port: 0,
    received: [],
    jobBody: () => '+OK\n',
    stall: () => false,
    sendEvent(headers) {
      for (const s of authed) s.write(frameEvent(headers))
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
    socket.on('data', (chunk) => {
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
        const reply = (text: string, extra = '') => socket.write(`Content-Type: command/reply\nReply-Text: ${text}\n${extra}\n`)
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
          reply('+OK event listener enabled json')
        } else if (line.startsWith('bgapi ')) {
          const command = line.slice(6)
          if (esl.stall(command)) continue
          const job = headers.get('job-uuid') ?? 'job'
          reply(`+OK Job-UUID: ${job}`, `Job-UUID: ${job}\n`)
          void Promise.resolve(esl.jobBody(command)).then((body) => {
            if (body === undefined || socket.destroyed) return
            socket.write(
              frameEvent({ 'Event-Name': 'BACKGROUND_JOB', 'Job-UUID': job, 'Job-Command': command.split(' ')[0] ?? '', 'Content-Length': String(Buffer.byteLength(body)), _body: body }),
            )
          })
        } else if (line.startsWith('sendmsg ')) {
          reply('+OK')
          const uuid = line.slice(8)
          const app = headers.get('execute-app-name') ?? ''
          const eventUuid = headers.get('event-uuid') ?? ''
          socket.write(frameEvent({ 'Event-Name': 'CHANNEL_EXECUTE_COMPLETE', 'Unique-ID': uuid, Application: app, 'Application-UUID': eventUuid, 'Application-Response': '_none_' }))
        } else {
          reply('-ERR command not found')
        }
      }
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  ;(esl as { port: number }).port = (server.address() as AddressInfo).port
  return esl
}
