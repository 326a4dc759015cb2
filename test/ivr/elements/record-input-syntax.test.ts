/** Record and GetInput as `cod ivr validate` and the API read them: defaults, and every bad value with its message. */
import t from 'tap'
import { first, refused, wrap, reason } from '../document/helpers.js'

t.test('Record: defaults', async (t) => {
  t.match(first('<Record/>'), {
    type: 'Record',
    action: undefined,
    maxLength: { kind: 'literal', value: 60 },
    timeout: { kind: 'literal', value: 5 },
    finishOnKey: { kind: 'literal', value: '#' },
    playBeep: { kind: 'literal', value: true },
  })
})

t.test('Record: action is URLs or a Section of the document', async (t) => {
  t.match(first('<Record action="https://a.example.test/r, https://b.example.test/r"/>'), {
    action: { kind: 'literal', value: { kind: 'urls', urls: ['https://a.example.test/r', 'https://b.example.test/r'] } },
  })
  t.equal(reason(wrap('<Record action="done"/><Section name="done"><Hangup/></Section>')), 'accepted')
  t.match(refused('<Record action="nowhere"/>'), /Record action: there is no Section named "nowhere"/)
  t.match(refused('<Record action="ftp://x.example.test/"/>'), /Record action "ftp:\/\/x.example.test\/": must be http or https URLs separated by commas, or a Section name/)
})

t.test('Record: each bad value with its message', async (t) => {
  const rows: [string, RegExp][] = [
    ['<Record maxLength="0"/>', /Record maxLength "0": must be a whole number from 1 to 3600/],
    ['<Record maxLength="3601"/>', /Record maxLength "3601": must be a whole number from 1 to 3600/],
    ['<Record maxLength="1.5"/>', /Record maxLength "1.5": must be a whole number from 1 to 3600/],
    ['<Record timeout="0"/>', /Record timeout "0": must be a whole number from 1 to 60/],
    ['<Record timeout="61"/>', /Record timeout "61": must be a whole number from 1 to 60/],
    ['<Record finishOnKey="##"/>', /Record finishOnKey "##": must be one DTMF key \(0-9 \* # A-D\) or empty/],
    ['<Record finishOnKey="x"/>', /Record finishOnKey "x": must be one DTMF key/],
    ['<Record playBeep="yes"/>', /Record playBeep "yes": must be true or false/],
    ['<Record maxlength="5"/>', /unknown attribute "maxlength" on <Record> \(allowed: action, maxLength, timeout, finishOnKey, playBeep\)/],
    ['<Record>text</Record>', /Record/],
    ['<Record><Play>a.wav</Play></Record>', /Record/],
  ]
  for (const [inner, pattern] of rows) t.match(refused(inner), pattern, inner)
  t.equal(refused('<Record finishOnKey=""/>'), 'accepted', 'empty finishOnKey: no key ends it')
})

t.test('GetInput: defaults and prompts', async (t) => {
  t.match(first('<GetInput><Speak>Say something</Speak><Play purpose="prompt">a.wav</Play><Play purpose="alert">b.wav</Play></GetInput>'), {
    type: 'GetInput',
    timeout: { value: 5 },
    interdigitTimeout: { value: 5 },
    finishOnKey: { value: '#' },
    numDigits: { value: 99 },
    validDigits: { value: '0123456789*#' },
    maxTries: { value: 1 },
    playBeep: { value: false },
    language: { value: 'ja-JP' },
    speechTimeout: { value: 5 },
    profanityFilter: undefined,
    hints: { value: [] },
    prompts: [{ type: 'Speak' }, { type: 'Play' }],
    alerts: [{ type: 'Play' }],
  })
  t.match(first('<GetInput language="en-US" hints="sales, support desk,billing" profanityFilter="true" speechTimeout="10"/>'), {
    language: { value: 'en-US' },
    hints: { value: ['sales', 'support desk', 'billing'] },
    profanityFilter: { value: true },
    speechTimeout: { value: 10 },
  })
})

t.test('GetInput: each bad value with its message', async (t) => {
  const rows: [string, RegExp][] = [
    ['<GetInput timeout="0"/>', /GetInput timeout "0": must be a whole number from 1 to 300/],
    ['<GetInput interdigitTimeout="301"/>', /GetInput interdigitTimeout "301": must be a whole number from 1 to 300/],
    ['<GetInput finishOnKey="12"/>', /GetInput finishOnKey "12": must be one DTMF key/],
    ['<GetInput numDigits="100"/>', /GetInput numDigits "100": must be a whole number from 1 to 99/],
    ['<GetInput validDigits="x"/>', /GetInput validDigits "x": must be 1-16 DTMF keys/],
    ['<GetInput maxTries="11"/>', /GetInput maxTries "11": must be a whole number from 1 to 10/],
    ['<GetInput playBeep="1"/>', /GetInput playBeep "1": must be true or false/],
    ['<GetInput language="english"/>', /GetInput language "english": must be a BCP 47 language tag such as en-US or ja-JP/],
    ['<GetInput language="en_US"/>', /GetInput language "en_US": must be a BCP 47 language tag/],
    ['<GetInput speechTimeout="0"/>', /GetInput speechTimeout "0": must be a whole number from 1 to 60/],
    ['<GetInput speechTimeout="61"/>', /GetInput speechTimeout "61": must be a whole number from 1 to 60/],
    ['<GetInput profanityFilter="maybe"/>', /GetInput profanityFilter "maybe": must be true or false/],
    ['<GetInput hints="a,,b"/>', /GetInput hints "a,,b": must be a comma list of up to 50 phrases/],
    ['<GetInput hints="sales}{x"/>', /GetInput hints "sales\}\{x": must be a comma list/],
    ["<GetInput hints=\"it's\"/>", /GetInput hints "it's": must be a comma list/],
    [`<GetInput hints="${Array.from({ length: 51 }, (_, i) => `p${i}`).join(',')}"/>`, /GetInput hints ".*": must be a comma list of up to 50 phrases/],
    ['<GetInput action="nowhere"/>', /GetInput action: there is no Section named "nowhere"/],
    ['<GetInput><Play purpose="beep">a.wav</Play></GetInput>', /Play purpose "beep": must be prompt or alert \(absent: prompt\)/],
    ['<GetInput><Hangup/></GetInput>', /<GetInput> may contain only <Play>, <Speak> and <Wait>, found <Hangup>/],
    ['<GetInput speechtimeout="3"/>', /unknown attribute "speechtimeout" on <GetInput> \(allowed: action, timeout, interdigitTimeout, finishOnKey, numDigits, validDigits, maxTries, playBeep, language, speechTimeout, profanityFilter, hints\)/],
  ]
  for (const [inner, pattern] of rows) t.match(refused(inner), pattern, inner)
})

t.test('Record and GetInput results are call parameters: Set may not overwrite them', async (t) => {
  for (const name of ['RecordingId', 'RecordingUrl', 'RecordingDuration', 'InputType', 'Speech', 'Confidence']) {
    t.match(refused(`<Set var="${name}" val="x"/>`), new RegExp(name), name)
  }
})
