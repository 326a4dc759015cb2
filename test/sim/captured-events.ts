/**
 * The JSON events of a capture in test/fixtures/freeswitch/esl/, read as the socket received
 * them: the RECV records joined back into one byte stream (a record is a TCP chunk: an event may
 * span two), then cut into ESL messages (test/fixtures/freeswitch/README.md gives the format).
 */
import { readFileSync } from 'node:fs'

export type CapturedEvent = Readonly<Record<string, string>>

const MARKER_RE = /^#### (<<< RECV|>>> SENT) (\d+) bytes[^\n]*\n/gm

export function capturedEvents(fixture: string): CapturedEvent[] {
  const text = readFileSync(new URL(`../fixtures/freeswitch/esl/${fixture}`, import.meta.url), 'latin1')
  let stream = ''
  for (const m of text.matchAll(MARKER_RE)) {
    const start = (m.index ?? 0) + m[0].length
    if (m[1] === '<<< RECV') stream += text.slice(start, start + Number(m[2]))
  }
  const events: CapturedEvent[] = []
  for (let at = 0; at < stream.length; ) {
    const end = stream.indexOf('\n\n', at)
    if (end < 0) break
    const headers = Object.fromEntries(
      stream
        .slice(at, end)
        .split('\n')
        .map((l) => [l.slice(0, l.indexOf(': ')), l.slice(l.indexOf(': ') + 2)]),
    )
    const length = Number(headers['Content-Length'] ?? 0)
    const body = Buffer.from(stream.slice(end + 2, end + 2 + length), 'latin1').toString('utf8')
    if (headers['Content-Type'] === 'text/event-json') events.push(JSON.parse(body) as CapturedEvent)
    at = end + 2 + length
  }
  return events
}
