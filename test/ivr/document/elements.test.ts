import t from 'tap'
import type { IvrElement } from '../../../src/ivr/document/index.js'
import type { GetDigits } from '../../../src/ivr/elements/index.js'
import { first, lit, parsed, wrap } from './helpers.js'

/** Element without its position (positions have their own test). */
function shape(e: IvrElement | undefined): Record<string, unknown> {
  return JSON.parse(JSON.stringify(e, (k, v: unknown) => (k === 'pos' ? undefined : v))) as Record<string, unknown>
}

t.test('root may be IVR or Response; body and sections', async (t) => {
  t.same(parsed('<IVR/>').body, [])
  t.same(parsed('<Response></Response>').body, [])
  t.same(parsed('<?xml version="1.0" encoding="UTF-8"?>\n<!-- a comment -->\n<IVR>\n</IVR>\n').body, [])
  const d = parsed(wrap('<Answer/><Section name="a"><Hangup/></Section><Section name="b"/><Hangup/>'))
  t.same(d.body.map((e) => e.type), ['Answer', 'Hangup'])
  t.same([...d.sections.keys()], ['a', 'b'])
  t.same(d.sections.get('a')?.map((e) => e.type), ['Hangup'])
  t.same(d.sections.get('b'), [])
})

t.test('Answer', async (t) => {
  t.same(shape(first('<Answer/>')), { type: 'Answer' })
  t.same(shape(first('<Answer>  </Answer>')), { type: 'Answer' })
})

t.test('Play: defaults and attributes', async (t) => {
  t.same(shape(first('<Play>ivr/welcome.wav</Play>')), {
    type: 'Play',
    loop: lit(1),
    terminators: lit(''),
    source: lit({ kind: 'file', name: 'ivr/welcome.wav' }),
  })
  t.same(shape(first('<Play loop="5" terminators="#*1">  https://media.example.test/a.mp3  </Play>')), {
    type: 'Play',
    loop: lit(5),
    terminators: lit('#*1'),
    source: lit({ kind: 'url', url: 'https://media.example.test/a.mp3' }),
  })
  t.same(shape(first('<Play>custom/hello_world-1.wav</Play>')).source, lit({ kind: 'file', name: 'custom/hello_world-1.wav' }))
  t.same(shape(first('<Play><![CDATA[http://m.example.test/a.wav?x=1&y=2]]></Play>')).source, lit({ kind: 'url', url: 'http://m.example.test/a.wav?x=1&y=2' }))
  t.same(shape(first('<Play>http://m.example.test/a.wav?x=1&amp;y=2</Play>')).source, lit({ kind: 'url', url: 'http://m.example.test/a.wav?x=1&y=2' }))
})

t.test('Speak: defaults and attributes', async (t) => {
  t.same(shape(first('<Speak>こんにちは</Speak>')), {
    type: 'Speak',
    language: lit('ja-JP'),
    loop: lit(1),
    text: lit('こんにちは'),
  })
  t.same(shape(first('<Speak language="en-US" voice="slt" loop="2">Hello &amp; welcome</Speak>')), {
    type: 'Speak',
    language: lit('en-US'),
    voice: lit('slt'),
    loop: lit(2),
    text: lit('Hello & welcome'),
  })
  t.same(shape(first('<Speak>line one\n  line two</Speak>')).text, lit('line one\n  line two'))
})

t.test('Wait: default 1 second, fractions allowed', async (t) => {
  t.same(shape(first('<Wait/>')), { type: 'Wait', length: lit(1) })
  t.same(shape(first('<Wait length="0.5"/>')), { type: 'Wait', length: lit(0.5) })
  t.same(shape(first('<Wait length="0"/>')), { type: 'Wait', length: lit(0) })
  t.same(shape(first('<Wait length="3600"/>')), { type: 'Wait', length: lit(3600) })
})

t.test('GetDigits: every default', async (t) => {
  t.same(shape(first('<GetDigits/>')), {
    type: 'GetDigits',
    timeout: lit(5),
    interdigitTimeout: lit(5),
    finishOnKey: lit('#'),
    numDigits: lit(99),
    validDigits: lit('0123456789*#'),
    maxTries: lit(1),
    playBeep: lit(false),
    prompts: [],
    alerts: [],
  })
  t.equal((first('<GetDigits/>') as GetDigits).action, undefined)
})

t.test('GetDigits: every attribute, prompts and alerts', async (t) => {
  const g = first(`<GetDigits action="https://a.example.test/next, https://b.example.test/next" timeout="10"
      interdigitTimeout="3" finishOnKey="*" numDigits="4" validDigits="0123456789" maxTries="3" playBeep="true">
    <Speak>Enter your PIN</Speak>
    <Play purpose="alert">ivr/invalid.wav</Play>
    <Wait length="0.5"/>
    <Speak purpose="alert">Try again</Speak>
  </GetDigits>`) as GetDigits
  t.same(g.action, lit(['https://a.example.test/next', 'https://b.example.test/next']))
  t.same(g.timeout, lit(10))
  t.same(g.interdigitTimeout, lit(3))
  t.same(g.finishOnKey, lit('*'))
  t.same(g.numDigits, lit(4))
  t.same(g.validDigits, lit('0123456789'))
  t.same(g.maxTries, lit(3))
  t.same(g.playBeep, lit(true))
  t.same(g.prompts.map((p) => p.type), ['Speak', 'Wait'])
  t.same(g.alerts.map((p) => p.type), ['Play', 'Speak'])
  t.same(shape(g.alerts[0]), { type: 'Play', loop: lit(1), terminators: lit(''), source: lit({ kind: 'file', name: 'ivr/invalid.wav' }) })
  t.same((first('<GetDigits finishOnKey=""/>') as GetDigits).finishOnKey, lit(''))
  t.same((first('<GetDigits playBeep="false"/>') as GetDigits).playBeep, lit(false))
})

t.test('Set: val or expr', async (t) => {
  t.same(shape(first('<Set var="greeting" val="hello"/>')), { type: 'Set', var: 'greeting', value: { kind: 'val', val: lit('hello') } })
  t.same(shape(first('<Set var="_x1" val=""/>')), { type: 'Set', var: '_x1', value: { kind: 'val', val: lit('') } })
  t.same(shape(first('<Set var="n" expr="int(Digits) + 1"/>')), {
    type: 'Set',
    var: 'n',
    value: {
      kind: 'expr',
      expr: {
        source: 'int(Digits) + 1',
        ast: { kind: 'arith', op: '+', left: { kind: 'call', fn: 'int', args: [{ kind: 'name', name: 'Digits' }] }, right: { kind: 'literal', value: 1 } },
      },
    },
  })
})

t.test('If: Then and optional Else', async (t) => {
  const e = first('<If expr="Digits == \'1\'"><Then><Answer/><Hangup/></Then><Else><Park/></Else></If>')
  if (e.type !== 'If') return t.fail(e.type)
  t.equal(e.expr.source, "Digits == '1'")
  t.same(e.then.map((x) => x.type), ['Answer', 'Hangup'])
  t.same(e.else.map((x) => x.type), ['Park'])
  // `<` written as &lt; reaches the expression as <.
  const lt = first('<If expr="n &lt; 3 and n &lt;= 2"><Then/></If>')
  t.same(lt.type === 'If' && lt.expr.source, 'n < 3 and n <= 2')
  const noElse = first('<If expr="true"><Then/></If>')
  t.same(noElse.type === 'If' && noElse.else, [])
})

t.test('Switch: cases and default', async (t) => {
  const e = first(`<Switch expr="Digits">
    <Case val="1"><Transfer>sales</Transfer></Case>
    <Case val=""><Hangup/></Case>
    <Default><GoTo>menu</GoTo></Default>
  </Switch><Section name="menu"/>`)
  if (e.type !== 'Switch') return t.fail(e.type)
  t.equal(e.expr.source, 'Digits')
  t.same(e.cases.map((c) => c.val), [lit('1'), lit('')])
  t.same(e.cases.map((c) => c.body.map((x) => x.type)), [['Transfer'], ['Hangup']])
  t.same(e.default.map((x) => x.type), ['GoTo'])
  const noDefault = first('<Switch expr="x"><Case val="a"/></Switch>')
  t.same(noDefault.type === 'Switch' && noDefault.default, [])
})

t.test('Cond: clauses and optional Else', async (t) => {
  const e = first(`<Cond>
    <Clause expr="hour() LT 9"><Speak>early</Speak></Clause>
    <Clause expr="hour() GE 18"><Speak>late</Speak></Clause>
    <Else><Speak>open</Speak></Else>
  </Cond>`)
  if (e.type !== 'Cond') return t.fail(e.type)
  t.same(e.clauses.map((c) => c.expr.source), ['hour() LT 9', 'hour() GE 18'])
  t.same(e.clauses.map((c) => c.body.length), [1, 1])
  t.same(e.else.map((x) => x.type), ['Speak'])
  const noElse = first('<Cond><Clause expr="1"/></Cond>')
  t.same(noElse.type === 'Cond' && noElse.else, [])
})

t.test('GoTo and SetErrorHandler', async (t) => {
  const d = parsed(wrap('<SetErrorHandler>oops</SetErrorHandler><GoTo> main-1.x </GoTo><Section name="main-1.x"/><Section name="oops"/>'))
  t.same(shape(d.body[0]), { type: 'SetErrorHandler', section: lit('oops') })
  t.same(shape(d.body[1]), { type: 'GoTo', section: lit('main-1.x') })
})

t.test('GetJSON: default method POST', async (t) => {
  t.same(shape(first('<GetJSON var="data" url="https://api.example.test/balance?id=1&amp;x=2"/>')), {
    type: 'GetJSON',
    var: 'data',
    url: lit(['https://api.example.test/balance?id=1&x=2']),
    method: lit('POST'),
  })
  t.same(shape(first('<GetJSON var="d" url="http://a.test/x,http://b.test/x" method="GET"/>')), {
    type: 'GetJSON',
    var: 'd',
    url: lit(['http://a.test/x', 'http://b.test/x']),
    method: lit('GET'),
  })
})

t.test('Redirect: default method POST', async (t) => {
  t.same(shape(first('<Redirect>https://ivr.example.test/next</Redirect>')), { type: 'Redirect', method: lit('POST'), url: lit(['https://ivr.example.test/next']) })
  t.same(shape(first('<Redirect method="GET">https://a.test/, https://b.test/</Redirect>')), { type: 'Redirect', method: lit('GET'), url: lit(['https://a.test/', 'https://b.test/']) })
})

t.test('Transfer: default answerTimeout 30, failureAction URL or Section', async (t) => {
  t.same(shape(first('<Transfer>alice</Transfer>')), { type: 'Transfer', target: lit('alice'), answerTimeout: lit(30) })
  t.same(shape(first('<Transfer callingNumber="0501230000" answerTimeout="180" failureAction="https://ivr.example.test/failed">+81312345678</Transfer>')), {
    type: 'Transfer',
    target: lit('+81312345678'),
    callingNumber: lit('0501230000'),
    failureAction: lit({ kind: 'urls', urls: ['https://ivr.example.test/failed'] }),
    answerTimeout: lit(180),
  })
  const d = parsed(wrap('<Transfer failureAction="busy_line" answerTimeout="5">2001</Transfer><Section name="busy_line"/>'))
  t.same(shape(d.body[0]), { type: 'Transfer', target: lit('2001'), failureAction: lit({ kind: 'section', name: 'busy_line' }), answerTimeout: lit(5) })
})

t.test('Park: default 21600 seconds', async (t) => {
  t.same(shape(first('<Park/>')), { type: 'Park', timeout: lit(21600) })
  t.same(shape(first('<Park timeout="60"/>')), { type: 'Park', timeout: lit(60) })
})

t.test('Hangup: optional reason', async (t) => {
  t.same(shape(first('<Hangup/>')), { type: 'Hangup' })
  t.same(shape(first('<Hangup reason="rejected"/>')), { type: 'Hangup', reason: lit('rejected') })
  t.same(shape(first('<Hangup reason="busy"/>')), { type: 'Hangup', reason: lit('busy') })
})

t.test('positions: line, column and path', async (t) => {
  const d = parsed('<IVR>\n  <Answer/>\n  <Section name="s">\n    <Play>a.wav</Play>\n    <Play>b.wav</Play>\n  </Section>\n  <Answer/>\n</IVR>')
  t.same(d.body[0]?.pos, { line: 2, column: 3, path: '/IVR/Answer[1]' })
  t.same(d.body[1]?.pos, { line: 7, column: 3, path: '/IVR/Answer[2]' })
  t.same(d.sections.get('s')?.[1]?.pos, { line: 5, column: 5, path: '/IVR/Section[1]/Play[2]' })
  // CRLF line ends count as one.
  t.same(parsed('<IVR>\r\n\r\n <Answer/></IVR>').body[0]?.pos, { line: 3, column: 2, path: '/IVR/Answer[1]' })
})

t.test('character references and CDATA', async (t) => {
  t.same(shape(first('<Speak>&#x65E5;&#26412; &lt;&gt;&quot;&apos;</Speak>')).text, lit('日本 <>"\''))
  t.same(shape(first('<Speak><![CDATA[a &amp; <b>]]></Speak>')).text, lit('a &amp; <b>'))
  t.same(shape(first('<Set var="v" val="a&#10;b"/>')).value, { kind: 'val', val: lit('a\nb') })
  // Attribute-value normalization: a literal newline in an attribute is a space.
  t.same(shape(first('<Set var="v" val="a\nb"/>')).value, { kind: 'val', val: lit('a b') })
  // A byte order mark is ignored.
  t.same(parsed('\ufeff<IVR><Answer/></IVR>').body.length, 1)
})
