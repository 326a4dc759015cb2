/**
 * src/pbx/event-json.ts: an event's JSON body read as esl-lite reads it (processRawEvent), into
 * a header map of strings. The bodies are the shapes switch_event_serialize_json (switch_event.c)
 * writes: strings, and an array of strings for a header FreeSWITCH holds as one.
 */
import t from 'tap'
import { readEventJson } from '../../src/pbx/event-json.js'

const read = (body: string) => readEventJson(Buffer.from(body, 'utf8'))

t.test('an event: its headers, strings as they were sent', async (t) => {
  t.same(read('{"Event-Name":"CHANNEL_CREATE","Unique-ID":"u1","variable_note":"caf\\u00e9 \\"q\\" \\\\ [x]"}'), {
    'Event-Name': 'CHANNEL_CREATE',
    'Unique-ID': 'u1',
    variable_note: 'café "q" \\ [x]',
  })
  t.same(read('{"Event-Name":"BACKGROUND_JOB","Job-UUID":"j","Content-Length":"3","_body":"+OK"}')?._body, '+OK', 'the body of a BACKGROUND_JOB')
})

t.test('a header held as an array (multi-valued) is removed; the others stay', async (t) => {
  t.same(read('{"Event-Name":"CHANNEL_ANSWER","Unique-ID":"u2","variable_multi":["a","b"],"Other":"o"}'), {
    'Event-Name': 'CHANNEL_ANSWER',
    'Unique-ID': 'u2',
    Other: 'o',
  })
  t.same(read('{"Event-Name":"CHANNEL_ANSWER","n":["[",1],"s":"]"}'), { 'Event-Name': 'CHANNEL_ANSWER', s: ']' })
})

t.test('what is no event esl-lite would emit: undefined (esl-lite then resets the link)', async (t) => {
  for (const body of ['', 'not json {', '[]', '["CHANNEL_CREATE"]', '"CHANNEL_CREATE"', 'null', '42', '{}', '{"Unique-ID":"u"}', '{"Event-Name":5}', '{"Event-Name":["CHANNEL_CREATE"]}']) {
    t.equal(read(body), undefined, JSON.stringify(body))
  }
})
