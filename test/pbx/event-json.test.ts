/**
 * src/pbx/event-json.ts: an event's JSON body read as esl-lite reads it (processRawEvent), into
 * a header map of strings. The bodies are the shapes switch_event_serialize_json (switch_event.c)
 * writes: strings, and an array of strings for a header FreeSWITCH holds as one.
 *
 * Channel events (CHANNEL_CREATE ... CHANNEL_DESTROY) keep only the headers the daemon reads
 * (src/pbx/event-headers.ts), read by one pass over the text; the pass must always give what
 * JSON.parse gives for those headers, or leave the body to JSON.parse. Checked here against
 * JSON.parse on every event of the captures, on generated events full of escapes, and on
 * thousands of damaged bodies.
 */
import { isAscii } from 'node:buffer'
import { readFileSync, readdirSync } from 'node:fs'
import t from 'tap'
import { EVENT_HEADERS } from '../../src/pbx/event-headers.js'
import { PICKED_EVENTS, pickChannelEvent, readEventJson } from '../../src/pbx/event-json.js'

const read = (body: string) => readEventJson(Buffer.from(body, 'utf8'))
const WANTED: ReadonlySet<string> = new Set(EVENT_HEADERS)
const PICKED = [...PICKED_EVENTS]

/** What JSON.parse makes of a body: its string headers, or undefined when it is no event. */
function parsedStrings(text: string): Record<string, string> | undefined {
  let p: unknown
  try {
    p = JSON.parse(text)
  } catch {
    return undefined
  }
  if (typeof p !== 'object' || p === null || Array.isArray(p)) return undefined
  const entries = Object.entries(p as Record<string, unknown>).filter((e): e is [string, string] => typeof e[1] === 'string')
  const out = Object.fromEntries(entries)
  return typeof (p as Record<string, unknown>)['Event-Name'] === 'string' ? out : undefined
}

const restricted = (h: Record<string, string>): Record<string, string> => Object.fromEntries(Object.entries(h).filter(([k]) => WANTED.has(k)))

/**
 * A raw control character in a string is taken as if escaped (event-json.ts says why: cJSON never
 * writes one); JSON.parse refuses it. The reference JSON.parse reads the body with them escaped.
 */
// eslint-disable-next-line no-control-regex -- exactly the characters JSON refuses unescaped
const controlsEscaped = (text: string): string => text.replace(/[\u0000-\u001f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)

/** The pass either leaves the body to JSON.parse or gives exactly JSON.parse's wanted headers. */
function checkPass(text: string): 'picked' | 'left' {
  const picked = pickChannelEvent(Buffer.from(text, 'utf8'))
  if (picked === undefined) return 'left'
  const reference = parsedStrings(controlsEscaped(text))
  if (reference === undefined) throw new Error(`the pass read a body JSON.parse refuses: ${JSON.stringify(text.slice(0, 200))}`)
  const want = restricted(reference)
  const got = { ...picked } as Record<string, string>
  const a = JSON.stringify(Object.entries(got).sort())
  const b = JSON.stringify(Object.entries(want).sort())
  if (a !== b) throw new Error(`the pass differs from JSON.parse on ${JSON.stringify(text.slice(0, 200))}: ${a} vs ${b}`)
  return 'picked'
}

t.test('an event other than a channel event: all its headers, strings as they were sent', async (t) => {
  t.same(read('{"Event-Name":"CHANNEL_PARK","Unique-ID":"u1","variable_note":"caf\\u00e9 \\"q\\" \\\\ [x]"}'), {
    'Event-Name': 'CHANNEL_PARK',
    'Unique-ID': 'u1',
    variable_note: 'café "q" \\ [x]',
  })
  t.same(read('{"Event-Name":"BACKGROUND_JOB","Job-UUID":"j","Content-Length":"3","_body":"+OK"}')?._body, '+OK', 'the body of a BACKGROUND_JOB')
})

t.test('a channel event: the headers the daemon reads, decoded as JSON.parse decodes them; no other', async (t) => {
  t.same(read('{"Event-Name":"CHANNEL_CREATE","Core-UUID":"c","Unique-ID":"u1","Caller-Caller-ID-Name":"\\"Caf\\u00e9\\" \\\\ [x]","variable_note":"n","variable_cod_domain":"example.test"}'), {
    'Event-Name': 'CHANNEL_CREATE',
    'Unique-ID': 'u1',
    'Caller-Caller-ID-Name': '"Café" \\ [x]',
    variable_cod_domain: 'example.test',
  })
})

t.test('a header held as an array (multi-valued) is removed; the others stay', async (t) => {
  t.same(read('{"Event-Name":"CHANNEL_ANSWER","Unique-ID":"u2","variable_multi":["a","b\\"]"],"variable_cod_role":"originator","e":[]}'), {
    'Event-Name': 'CHANNEL_ANSWER',
    'Unique-ID': 'u2',
    variable_cod_role: 'originator',
  })
  // An array of anything but strings: the channel event is left to JSON.parse (all its string headers).
  t.same(read('{"Event-Name":"CHANNEL_ANSWER","Unique-ID":"u3","n":["a",1],"Other":"o"}'), { 'Event-Name': 'CHANNEL_ANSWER', 'Unique-ID': 'u3', Other: 'o' })
  t.same(read('{"Event-Name":"CHANNEL_PARK","n":["[",1],"s":"]"}'), { 'Event-Name': 'CHANNEL_PARK', s: ']' })
})

t.test('the one difference from JSON.parse, on purpose: a raw control character in a channel event string is taken', async (t) => {
  // cJSON (print_string_ptr) escapes every character below 0x20: FreeSWITCH never sends this.
  t.same(read('{"Event-Name":"CHANNEL_CREATE","Unique-ID":"a\tb"}'), { 'Event-Name': 'CHANNEL_CREATE', 'Unique-ID': 'a\tb' })
  t.equal(read('{"Event-Name":"CHANNEL_PARK","Unique-ID":"a\tb"}'), undefined, 'other events: refused by JSON.parse')
})

t.test('what is no event esl-lite would emit: undefined (the reader then resets the link)', async (t) => {
  const bad = ['', 'not json {', '[]', '["CHANNEL_CREATE"]', '"CHANNEL_CREATE"', 'null', '42', '{}', '{"Unique-ID":"u"}', '{"Event-Name":5}', '{"Event-Name":["CHANNEL_CREATE"]}']
  // Channel events that start as the pass expects and then break.
  bad.push('{"Event-Name":"CHANNEL_CREATE"', '{"Event-Name":"CHANNEL_CREATE",}', '{"Event-Name":"CHANNEL_CREATE","a":"\\x"}', '{"Event-Name":"CHANNEL_CREATE","a":["b",]}', '{"Event-Name":"CHANNEL_CREATE","a":"\\u12"}', '{"Event-Name":"CHANNEL_CREATE","a" "b"}', '{"Event-Name":"CHANNEL_CREATE"}x')
  for (const body of bad) t.equal(read(body), undefined, JSON.stringify(body))
})

/** Every event body of the captures of a real FreeSWITCH 1.10.12. */
function capturedBodies(): string[] {
  const dir = 'test/fixtures/freeswitch/esl'
  const out: string[] = []
  for (const file of readdirSync(dir)) {
    const data = readFileSync(`${dir}/${file}`, 'utf8')
    for (let at = data.indexOf('{"Event-Name"'); at >= 0; at = data.indexOf('{"Event-Name"', at + 1)) {
      // The body runs to the '}' after which JSON.parse accepts it (values may hold braces).
      for (let end = data.indexOf('}', at); end >= 0; end = data.indexOf('}', end + 1)) {
        const body = data.slice(at, end + 1)
        if (parsedStrings(body) !== undefined) {
          out.push(body)
          break
        }
      }
    }
  }
  return out
}

t.test('every event of the captures: the pass gives what JSON.parse gives', async (t) => {
  const bodies = capturedBodies()
  t.ok(bodies.length > 200, `${bodies.length} events`)
  let picked = 0
  for (const body of bodies) {
    const name = parsedStrings(body)?.['Event-Name'] ?? ''
    const r = checkPass(body)
    if (r === 'picked') picked++
    // A captured channel event without an array value is taken by the pass.
    if (PICKED.includes(name) && !body.includes('":[')) t.equal(r, 'picked', `${name} taken by the pass`)
    const whole = read(body)
    const reference = parsedStrings(body)
    t.ok(whole !== undefined && reference !== undefined)
    if (r === 'picked') t.same({ ...whole }, restricted(reference ?? {}))
    else t.same({ ...whole }, reference)
  }
  t.ok(picked > 100, `${picked} read by the pass`)
})

/** A small deterministic generator (tests must be repeatable). */
function rng(seed: number): () => number {
  let s = seed >>> 0
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0
    return s / 2 ** 32
  }
}

const ASCII_PIECES = ['a', 'Z', '0', ' ', '"', '\\', '/', '\n', '\r', '\t', '\u0001', '\u007f', '[', ']', '{', '}', ':', ',', 'variable_', '\\"', 'u00e9']
const PIECES = [...ASCII_PIECES, 'é', '€', '😀', '\u2028']

t.test('generated channel events full of escapes: the pass takes the ASCII ones and gives what JSON.parse gives', async (t) => {
  const next = rng(15)
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)] as T
  const names = [...EVENT_HEADERS.filter((h) => h !== 'Event-Name'), 'Other-Header', 'variable_other', 'Event-Sequence', 'variable_sip_h_X', 'Unique', 'variable_cod_domai']
  let taken = 0
  let ascii_ = 0
  for (let i = 0; i < 2000; i++) {
    const event: Record<string, string> = { 'Event-Name': pick(PICKED) }
    const n = 1 + Math.floor(next() * 40)
    for (let k = 0; k < n; k++) {
      let value = ''
      const len = Math.floor(next() * 12)
      // Every other event ASCII only (FreeSWITCH's usual), the others with any character.
      for (let c = 0; c < len; c++) value += pick(i % 2 === 0 ? ASCII_PIECES : PIECES)
      event[pick(names)] = value
    }
    const body = JSON.stringify(event)
    const ascii = isAscii(Buffer.from(body, 'utf8'))
    if (ascii) ascii_++
    const r = checkPass(body)
    if (r === 'picked') taken++
    // JSON.stringify writes what FreeSWITCH writes (compact, escaped): the pass takes every ASCII one, and leaves the others to JSON.parse.
    if (r !== (ascii ? 'picked' : 'left')) t.fail(`${r}: ${body}`)
  }
  t.equal(taken, ascii_)
  t.ok(ascii_ >= 1000 && ascii_ < 1500, `${ascii_} of 2000 ASCII`)
})

t.test('damaged bodies: the pass never reads one differently from JSON.parse', async (t) => {
  const next = rng(42)
  const bodies = capturedBodies().filter((b) => PICKED.some((n) => b.startsWith(`{"Event-Name":"${n}"`)))
  const edits = ['"', '\\', ',', ':', '}', '{', '[', ' ', '\n', 'u', 'x', '\u0000', '""', '\\u00', '":"']
  let left = 0
  let picked = 0
  for (let i = 0; i < 6000; i++) {
    const body = bodies[i % bodies.length] ?? ''
    const at = Math.floor(next() * body.length)
    const edit = edits[Math.floor(next() * edits.length)] ?? ''
    const mode = Math.floor(next() * 3)
    const damaged = mode === 0 ? body.slice(0, at) + edit + body.slice(at) : mode === 1 ? body.slice(0, at) + body.slice(at + 1) : body.slice(0, at) + edit + body.slice(at + 1)
    if (checkPass(damaged) === 'picked') picked++
    else {
      left++
      // Left to JSON.parse: the whole reader is undefined exactly when JSON.parse finds no event.
      if ((read(damaged) === undefined) !== (parsedStrings(damaged) === undefined)) t.fail(`read differently from JSON.parse: ${JSON.stringify(damaged.slice(0, 200))}`)
    }
  }
  t.ok(left > 1000 && picked > 100, `${picked} damaged bodies still read by the pass, ${left} left to JSON.parse`)
})

t.test('a value kept from a channel event does not keep the event text alive', async (t) => {
  // A V8 sliced string of the body's text would hold the whole ~6 kB text as long as the value
  // lives (a record's UUID, an interned caller number): 3.5 kB per live call in the scale
  // benchmark before the values were decoded from the bytes. Measured in a child with --expose-gc.
  const code = `
    import { readEventJson } from ${JSON.stringify(new URL('../../src/pbx/event-json.ts', import.meta.url).href)}
    const filler = 'x'.repeat(6000)
    const kept = []
    globalThis.gc(); const before = process.memoryUsage().heapUsed
    for (let i = 0; i < 2000; i++) {
      const body = Buffer.from(JSON.stringify({ 'Event-Name': 'CHANNEL_CREATE', 'Unique-ID': 'uuid-' + i + '-' + 'u'.repeat(30), variable_filler: filler + i }))
      kept.push(readEventJson(body)['Unique-ID'])
    }
    globalThis.gc(); const grown = process.memoryUsage().heapUsed - before
    console.log(JSON.stringify({ grown, kept: kept.length }))
  `
  const { spawnSync } = await import('node:child_process')
  const r = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', '--input-type=module', '-e', code], { encoding: 'utf8' })
  const out = JSON.parse(r.stdout.trim().split('\n').at(-1) ?? '{}') as { grown?: number; kept?: number }
  t.equal(out.kept, 2000, r.stderr)
  // 2,000 bodies of 6 kB held would be 12 MB; 2,000 UUID strings are about 0.2 MB.
  t.ok((out.grown ?? Infinity) < 2_000_000, `heap grew by ${out.grown} B for 2,000 values kept`)
})
