/**
 * Malformed WebSocket traffic on ws_cti (src/cti/index.ts; RFC 6455): broken upgrade requests,
 * then, on connections that were upgraded, frames no client library would send (unmasked,
 * reserved bits, unknown opcodes, invalid UTF-8, lengths of 2^63, fragmented or oversized
 * control frames, a continuation without a start, bad close codes, garbage) and messages that
 * are frames but not commands. Each such connection must be closed by the daemon (or get an
 * `invalid_message` result and stay usable), and nothing reaches the switch.
 */
import net from 'node:net'
import { AUTH_ALPHA, outcomeOf, type World } from './world.js'

const KEY = 'MDEyMzQ1Njc4OWFiY2RlZg=='
const upgradeHead = (path: string, extra: Record<string, string> = {}): Record<string, string> => ({
  authorization: AUTH_ALPHA,
  connection: 'Upgrade',
  upgrade: 'websocket',
  'sec-websocket-version': '13',
  'sec-websocket-key': KEY,
  ...extra,
})

/** A client frame: FIN + opcode, masked unless told otherwise, with the length in the form asked. */
function frame(opcode: number, payload: Buffer, o: { fin?: boolean; mask?: boolean; rsv?: number; lengthOverride?: bigint } = {}): Buffer {
  const first = ((o.fin ?? true) ? 0x80 : 0) | ((o.rsv ?? 0) << 4) | opcode
  const masked = o.mask ?? true
  const len = o.lengthOverride ?? BigInt(payload.length)
  let header: Buffer
  if (len < 126n) header = Buffer.from([first, (masked ? 0x80 : 0) | Number(len)])
  else if (len < 65536n) {
    header = Buffer.alloc(4)
    header[0] = first
    header[1] = (masked ? 0x80 : 0) | 126
    header.writeUInt16BE(Number(len), 2)
  } else {
    header = Buffer.alloc(10)
    header[0] = first
    header[1] = (masked ? 0x80 : 0) | 127
    header.writeBigUInt64BE(len, 2)
  }
  if (!masked) return Buffer.concat([header, payload])
  const key = Buffer.from([0x12, 0x34, 0x56, 0x78])
  const body = Buffer.from(payload.map((b, i) => b ^ (key[i % 4] as number)))
  return Buffer.concat([header, key, body])
}

const text = (s: string | Buffer, o?: Parameters<typeof frame>[2]) => frame(0x1, Buffer.isBuffer(s) ? s : Buffer.from(s, 'utf8'), o)
const closePayload = (code: number, reason = '') => Buffer.concat([Buffer.from([code >> 8, code & 0xff]), Buffer.from(reason)])

/** Opens ws_cti by hand, sends `bytes`, and reports what came back: the close code if the server closed. */
function session(w: World, bytes: readonly Buffer[], until?: (results: readonly string[]) => boolean): Promise<{ upgraded: boolean; closeCode: number | undefined; closed: boolean; results: string[] }> {
  const u = new URL(w.api)
  return new Promise((resolve) => {
    const s = net.connect(Number(u.port), u.hostname)
    let buf = Buffer.alloc(0)
    let upgraded = false
    let closeCode: number | undefined
    const results: string[] = []
    let done = false
    const finish = (closed: boolean) => {
      if (done) return
      done = true
      s.destroy()
      resolve({ upgraded, closeCode, closed, results })
    }
    const timer = setTimeout(() => finish(false), 6000)
    s.on('close', () => {
      clearTimeout(timer)
      finish(true)
    })
    s.on('error', () => finish(true))
    s.on('data', (c: Buffer) => {
      buf = Buffer.concat([buf, c])
      if (!upgraded) {
        const end = buf.indexOf('\r\n\r\n')
        if (end < 0) return
        upgraded = buf.subarray(0, 12).toString() === 'HTTP/1.1 101'
        buf = buf.subarray(end + 4)
        if (!upgraded) return finish(true)
        for (const b of bytes) s.write(b)
      }
      // Server frames are unmasked: read opcode and payload.
      while (buf.length >= 2) {
        const op = (buf[0] as number) & 0x0f
        let len = (buf[1] as number) & 0x7f
        let at = 2
        if (len === 126) {
          if (buf.length < 4) return
          len = buf.readUInt16BE(2)
          at = 4
        } else if (len === 127) {
          if (buf.length < 10) return
          len = Number(buf.readBigUInt64BE(2))
          at = 10
        }
        if (buf.length < at + len) return
        const payload = buf.subarray(at, at + len)
        buf = buf.subarray(at + len)
        if (op === 0x8) closeCode = payload.length >= 2 ? payload.readUInt16BE(0) : 1005
        if (op === 0x1) {
          const m = payload.toString('utf8')
          if (m.includes('"result"')) results.push(m)
          if (until?.(results) === true) return finish(false)
        }
      }
    })
    s.on('connect', () => {
      const head = upgradeHead('/api/ws_cti?app_name=frames&user_name=alice')
      s.write(`GET /api/ws_cti?app_name=frames&user_name=alice HTTP/1.1\r\nHost: x\r\n${Object.entries(head).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`)
    })
  })
}

export async function malformedFrames(w: World): Promise<string[]> {
  const problems: string[] = []
  const family = 'websocket frames'
  /** Frames after which the daemon must close the connection (RFC 6455 says with which code; any close passes). */
  const closing: Array<[string, Buffer[]]> = [
    ['an unmasked frame', [text('{"cmd":"hangup"}', { mask: false })]],
    ['reserved bits without an extension', [text('{}', { rsv: 4 })]],
    ['RSV2 and RSV3', [text('{}', { rsv: 3 })]],
    ['opcode 3 (reserved)', [frame(0x3, Buffer.from('x'))]],
    ['opcode 0xB (reserved control)', [frame(0xb, Buffer.from('x'))]],
    ['invalid UTF-8 in a text frame', [text(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]))]],
    ['an encoded surrogate', [text(Buffer.from([0x22, 0xed, 0xa0, 0x80, 0x22]))]],
    ['a length of 2^63', [text(Buffer.alloc(8), { lengthOverride: 2n ** 63n - 1n })]],
    ['a frame over 16 KiB', [text(`{"cmd":"park","uuid":"${'u'.repeat(20000)}"}`)]],
    ['a fragmented ping', [frame(0x9, Buffer.from('p'), { fin: false })]],
    ['a ping of 200 bytes', [frame(0x9, Buffer.alloc(200, 0x70))]],
    ['a continuation without a start', [frame(0x0, Buffer.from('{}'))]],
    ['a new message inside a fragmented one', [text('{"cmd":', { fin: false }), text('"park"}')]],
    ['fragments adding up past 16 KiB', [text('['.repeat(9000), { fin: false }), frame(0x0, Buffer.from(']'.repeat(9000)))]],
    ['a close with code 999', [frame(0x8, closePayload(999))]],
    ['a close with a 1-byte payload', [frame(0x8, Buffer.from([0x03]))]],
    ['a close reason that is not UTF-8', [frame(0x8, Buffer.concat([closePayload(1000), Buffer.from([0xff])]))]],
    ['4 KiB of garbage', [Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 131 + 7) & 0xff))]],
  ]
  for (const [name, bytes] of closing) {
    const r = await session(w, bytes)
    w.tally.count(family, r.closed ? `closed by the daemon (${r.closeCode ?? 'no close frame'})` : 'left open')
    if (!r.upgraded) problems.push(`${name}: the upgrade was refused`)
    else if (!r.closed) problems.push(`${name}: the connection was left open`)
  }
  /** Messages that are well-formed frames but not commands: a result with an error, the connection goes on. */
  const answered: Array<[string, Buffer]> = [
    ['a binary frame', frame(0x2, Buffer.from('{"cmd":"hangup"}'))],
    ['text that is not JSON', text('hangup all')],
    ['a JSON array', text('[{"cmd":"hangup"}]')],
    ['JSON null', text('null')],
    ['a JSON string', text('"hangup"')],
    ['JSON nested 5000 deep', text(`${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`)],
    ['a prototype key', text('{"__proto__":{"cmd":"hangup"},"cmd":"park"}')],
    ['an empty frame', text('')],
    ['a command split in three fragments', Buffer.concat([text('{"cmd":"ha', { fin: false }), frame(0x0, Buffer.from('ngup","uuid":"'), { fin: false }), frame(0x0, Buffer.from('00000000-0000-4000-8000-000000000000"}'))])],
  ]
  for (const [name, bytes] of answered) {
    const r = await session(w, [bytes, text('{"id":"after","cmd":"park","uuid":"00000000-0000-4000-8000-000000000000"}')], (results) => results.some((m) => m.includes('"after"')))
    const after = r.results.some((m) => m.includes('"after"'))
    w.tally.count(family, r.results.length > 0 ? 'answered with an error result' : r.closed ? `closed by the daemon (${r.closeCode ?? 'no close frame'})` : 'no answer')
    if (!r.upgraded) problems.push(`${name}: the upgrade was refused`)
    else if (r.results.length === 0 && !r.closed) problems.push(`${name}: neither answered nor closed`)
    else if (r.results.some((m) => m.includes('"result_code":0'))) problems.push(`${name}: a command was accepted: ${r.results.join(' ')}`)
    else if (!after && !r.closed) problems.push(`${name}: the connection stopped answering`)
  }
  return problems
}

/** Upgrade requests that are not valid WebSocket handshakes: refused without an upgrade. */
export async function badUpgrades(w: World): Promise<string[]> {
  const problems: string[] = []
  const path = '/api/ws_cti?app_name=x&user_name=alice'
  const cases: Array<[string, string, Record<string, string>]> = [
    ['no key', path, upgradeHead(path, { 'sec-websocket-key': '' })],
    ['a key that is not 16 bytes', path, upgradeHead(path, { 'sec-websocket-key': 'c2hvcnQ=' })],
    ['version 99', path, upgradeHead(path, { 'sec-websocket-version': '99' })],
    ['version 0', path, upgradeHead(path, { 'sec-websocket-version': '0' })],
    ['upgrade: h2c', path, upgradeHead(path, { upgrade: 'h2c' })],
    ['another path', '/api/ws_other', upgradeHead(path)],
    ['the xml_curl path', '/freeswitch/xml_curl', upgradeHead(path)],
    ['a repeated parameter', `${path}&app_name=y`, upgradeHead(path)],
    ['an unknown parameter', `${path}&debug=true`, upgradeHead(path)],
    ['full_events with a user', `${path}&full_events=true`, upgradeHead(path)],
    ['invalid percent-encoding', '/api/ws_cti?app_name=%ff%fe&user_name=alice', upgradeHead(path)],
    ['a POST upgrade', path, upgradeHead(path)],
  ]
  for (const [name, p, headers] of cases) {
    const a = await w.send({ method: name === 'a POST upgrade' ? 'POST' : 'GET', path: p, headers })
    w.tally.count('websocket upgrades', outcomeOf(a))
    if (a.status === 101 || a.status >= 500 || a.status === 0) problems.push(`${name}: ${a.status} ${a.text.slice(0, 120)}`)
  }
  return problems
}
