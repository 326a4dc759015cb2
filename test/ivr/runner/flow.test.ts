/** Set, If, Switch, Cond, Section/GoTo, SetErrorHandler, GetJSON, Redirect, loading and loop guards. */
import t from 'tap'
import { MAX_ERROR_JUMPS, MAX_IDLE_LOADS } from '../../../src/ivr/runner/index.js'
import { kills, MENU_URL, rig, runInline, wrap } from './helpers.js'

const spoken = (r: { pbx: { apps(): string[] } }): string[] =>
  r.pbx.apps().filter((a) => a.startsWith('speak ')).map((a) => a.slice('speak flite|kal|'.length))

t.test('Set val and expr; variables in templates; var_ parameters in fetches', async (t) => {
  const r = await runInline(
    t,
    wrap(
      `<Set var="name" val="Bob {{ CallingNumber }}"/><Set var="n" expr="int('41') + 1"/><Set var="l" expr="['a', 'b']"/>` +
        `<Speak>{{ name }} {{ n }} {{ l }} {{ len(l) }}</Speak><Redirect>https://app.example.test/next</Redirect>`,
    ),
    { docs: { 'https://app.example.test/next': wrap('<Speak>next</Speak>') } },
  )
  t.same(spoken(r), ['Bob 1001 42 ["a","b"] 2', 'next'])
  const p = r.fetcher.requests[0]?.params ?? {}
  t.equal(p.var_name, 'Bob 1001')
  t.equal(p.var_n, '42')
  t.equal(p.var_l, '["a","b"]')
  t.equal(p.CallUUID, r.uuid)
  t.equal(p.Direction, 'inbound')
  t.equal(p.CalledNumber, '3001')
  t.equal(p.CallingNumber, '1001')
  t.equal(p.CallerName, 'Alice')
  t.equal(p.DomainName, 'example.test')
  t.equal(p.UserName, 'alice', 'the calling phone is a user of the domain')
  t.equal(p.UserId, '1')
  t.equal(p.AnswerTime, '1795327686302035')
  t.equal(p.StartTime, '1795327686281943')
})

t.test('If / Then / Else', async (t) => {
  const doc = (n: number) =>
    wrap(`<Set var="n" expr="${n}"/><If expr="n GT 1 and n LE 5"><Then><Speak>in</Speak></Then><Else><Speak>out</Speak></Else></If><If expr="n == 9"><Then><Speak>nine</Speak></Then></If>`)
  t.same(spoken(await runInline(t, doc(3))), ['in'])
  t.same(spoken(await runInline(t, doc(9))), ['out', 'nine'])
})

t.test('Switch: str() of the value against Case val; Default; first match only', async (t) => {
  const doc = (v: string) =>
    wrap(`<Set var="v" expr="${v}"/><Switch expr="v"><Case val="1"><Speak>one</Speak></Case><Case val="1"><Speak>dup</Speak></Case><Case val="true"><Speak>yes</Speak></Case><Default><Speak>other</Speak></Default></Switch>`)
  // A literal duplicate Case is refused at validation; the template below makes two equal at run time.
  t.same(spoken(await runInline(t, doc('1').replace('<Case val="1"><Speak>dup', '<Case val="{{ 1 }}"><Speak>dup'))), ['one'])
  t.same(spoken(await runInline(t, doc("'1'").replace('<Case val="1"><Speak>dup', '<Case val="{{ 1 }}"><Speak>dup'))), ['one'], "'1' and 1 print alike")
  t.same(spoken(await runInline(t, doc('1 == 1').replace('<Case val="1"><Speak>dup', '<Case val="{{ 1 }}"><Speak>dup'))), ['yes'])
  t.same(spoken(await runInline(t, doc('5').replace('<Case val="1"><Speak>dup', '<Case val="{{ 1 }}"><Speak>dup'))), ['other'])
})

t.test('Cond: the first true Clause, later ones are not evaluated; Else', async (t) => {
  const r = await runInline(
    t,
    wrap(`<Cond><Clause expr="1 == 2"><Speak>a</Speak></Clause><Clause expr="'x' in 'xyz'"><Speak>b</Speak></Clause><Clause expr="1 / 0"><Speak>c</Speak></Clause></Cond>`),
  )
  t.same(spoken(r), ['b'])
  t.same(kills(r), ['NORMAL_CLEARING'], 'the division by zero never ran')
  const e = await runInline(t, wrap(`<Cond><Clause expr="0"><Speak>a</Speak></Clause><Else><Speak>else</Speak></Else></Cond>`))
  t.same(spoken(e), ['else'])
})

t.test('time functions use the domain time zone and the injected clock', async (t) => {
  // 2026-01-05T01:30:00Z is Monday 10:30 in Asia/Tokyo.
  const r = await runInline(t, wrap(`<Speak>{{ hour() }}:{{ minute() }} {{ weekday() }} {{ date() }}</Speak>`), {
    now: () => new Date('2026-01-05T01:30:00Z'),
  })
  t.same(spoken(r), ['10:30 0 2026-01-05'])
})

t.test('Sections run only when reached; GoTo jumps (no return); a menu loop', async (t) => {
  const r = await runInline(
    t,
    wrap(
      `<Speak>start</Speak><Section name="menu"><Set var="i" expr="(i or 0) + 1"/><Speak>menu {{ i }}</Speak><If expr="i LT 3"><Then><GoTo>menu</GoTo></Then></If><GoTo>bye</GoTo></Section>` +
        `<GoTo>menu</GoTo><Speak>never</Speak><Section name="bye"><Speak>bye</Speak></Section>`,
    ),
  )
  t.same(spoken(r), ['start', 'menu 1', 'menu 2', 'menu 3', 'bye'])
  t.same(kills(r), ['NORMAL_CLEARING'])
})

t.test('GoTo with a template naming no Section is a runtime error', async (t) => {
  const r = await runInline(t, wrap(`<Set var="s" val="nowhere"/><GoTo>{{ s }}</GoTo><Section name="x"><Speak>x</Speak></Section>`))
  t.same(spoken(r), [])
  t.same(kills(r), ['NORMAL_TEMPORARY_FAILURE'])
})

t.test('SetErrorHandler: runtime errors continue in the Section; Error names the problem', async (t) => {
  const r = await runInline(
    t,
    wrap(`<SetErrorHandler>err</SetErrorHandler><Set var="x" expr="1 + 'a'"/><Speak>never</Speak><Section name="err"><Speak>error: {{ Error }}</Speak></Section>`),
  )
  t.equal(spoken(r).length, 1)
  t.match(spoken(r)[0], /^error: line 1, column \d+ \(\/IVR\/Set\[1\]\): "1 \+ 'a'": cannot apply \+ to number and string/)
  t.same(kills(r), ['NORMAL_CLEARING'])
})

t.test('an error in the error handler jumps again, a bounded number of times', async (t) => {
  const r = await runInline(t, wrap(`<SetErrorHandler>err</SetErrorHandler><Section name="err"><Speak>e</Speak><Set var="x" expr="1 / 0"/></Section><Set var="y" expr="1 / 0"/>`))
  t.equal(spoken(r).length, MAX_ERROR_JUMPS)
  t.same(kills(r), ['NORMAL_TEMPORARY_FAILURE'])
})

t.test('an unhandled runtime error ends the call and tells the document URL', async (t) => {
  const r = rig(t)
  r.fetcher.docs.set(MENU_URL, wrap(`<Speak>hi</Speak><Set var="x" expr="1 / 0"/>`))
  r.parkExtension()
  await r.settle()
  t.same(spoken(r), ['hi'])
  t.same(kills(r), ['NORMAL_TEMPORARY_FAILURE'])
  t.equal(r.fetcher.reports.length, 1)
  t.equal(r.fetcher.reports[0]?.url, MENU_URL)
  t.match(r.fetcher.reports[0]?.error, /Set\[1\].*division by zero/)
})

t.test('an invalid fetched document: the URL is told CallStatus=error with the reason; the call ends', async (t) => {
  const r = rig(t)
  r.fetcher.docs.set(MENU_URL, '<IVR><Bogus/></IVR>')
  r.parkExtension()
  await r.settle()
  t.same(r.pbx.apps(), [], 'nothing ran')
  t.same(kills(r), ['NORMAL_TEMPORARY_FAILURE'])
  t.equal(r.fetcher.reports.length, 1)
  t.equal(r.fetcher.reports[0]?.url, MENU_URL)
  t.match(r.fetcher.reports[0]?.error, /unknown element <Bogus>/)
})

t.test('an invalid inline document ends the call without a report', async (t) => {
  const r = await runInline(t, '<Response><Play/></Response>')
  t.same(r.pbx.apps(), [])
  t.same(kills(r), ['NORMAL_TEMPORARY_FAILURE'])
  t.same(r.fetcher.reports, [])
})

t.test('GetJSON: objects with dot access; fallbacks; null on any failure', async (t) => {
  const r = await runInline(
    t,
    wrap(
      `<GetJSON var="acct" url="https://down.example.test/a, https://app.example.test/acct" method="GET"/>` +
        `<GetJSON var="none" url="https://down.example.test/b"/>` +
        `<Speak>{{ acct.balance }} {{ acct.owner.name }} {{ acct.__proto__ }} [{{ none }}] {{ none == null }}</Speak>`,
    ),
    { json: { 'https://app.example.test/acct': JSON.parse('{"balance": 12.5, "owner": {"name": "Ann"}, "__proto__": "p"}') } },
  )
  t.same(spoken(r), ['12.5 Ann p [] true'])
  const json = r.fetcher.requests.filter((q) => q.kind === 'json')
  t.same(
    json.map((q) => [q.urls[0], q.method]),
    [
      ['https://down.example.test/a', 'GET'],
      ['https://app.example.test/acct', 'GET'],
      ['https://down.example.test/b', 'POST'],
    ],
  )
})

t.test('Redirect: replaces the document (GET method honoured); the error handler does not carry over', async (t) => {
  const next = 'https://app.example.test/next'
  const r = await runInline(t, wrap(`<SetErrorHandler>h</SetErrorHandler><Redirect method="GET">${next}</Redirect><Speak>never</Speak><Section name="h"><Speak>h</Speak></Section>`), {
    docs: { [next]: wrap('<Speak>second</Speak><Set var="x" expr="1 / 0"/>') },
  })
  t.same(spoken(r), ['second'], 'the old handler Section is not run for the new document')
  t.equal(r.fetcher.requests[0]?.method, 'GET')
  t.same(kills(r), ['NORMAL_TEMPORARY_FAILURE'])
})

t.test('Redirect fallbacks: an invalid document makes the next URL be tried, and its URL is told', async (t) => {
  const bad = 'https://bad.example.test/doc'
  const good = 'https://good.example.test/doc'
  const r = await runInline(t, wrap(`<Redirect>${bad},${good}</Redirect>`), { docs: { [bad]: '<html/>', [good]: wrap('<Speak>good</Speak>') } })
  t.same(spoken(r), ['good'])
  t.same(
    r.fetcher.reports.map((x) => x.url),
    [],
    'a fallback answered: the invalid one is only reported when nothing could run',
  )
  const none = await runInline(t, wrap(`<Redirect>${bad},https://down.example.test/x</Redirect>`), { docs: { [bad]: '<html/>' } })
  t.same(
    none.fetcher.reports.map((x) => [x.url, x.params.CallStatus ?? 'set by reportError']),
    [[bad, 'in-progress']],
    'the URL that served an invalid document is told (reportError adds CallStatus=error)',
  )
  t.match(none.fetcher.reports[0]?.error, /root element must be <IVR> or <Response>/)
})

t.test('Redirect loops without media are stopped', async (t) => {
  const loop = 'https://app.example.test/loop'
  const r = await runInline(t, wrap(`<Redirect>${loop}</Redirect>`), { docs: { [loop]: wrap(`<Redirect>${loop}</Redirect>`) } })
  t.equal(r.fetcher.requests.length, MAX_IDLE_LOADS)
  t.same(kills(r), ['NORMAL_TEMPORARY_FAILURE'])
})

t.test('GoTo loops without media are stopped', async (t) => {
  const r = await runInline(t, wrap(`<GoTo>a</GoTo><Section name="a"><Set var="x" val="1"/><GoTo>a</GoTo></Section>`))
  t.same(kills(r), ['NORMAL_TEMPORARY_FAILURE'])
})

t.test('an empty document just hangs up', async (t) => {
  const r = await runInline(t, '<Response/>')
  t.same(r.pbx.apps(), [])
  t.same(kills(r), ['NORMAL_CLEARING'])
})
