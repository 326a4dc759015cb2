import t from 'tap'
import { readFileSync } from 'node:fs'
import { evaluate, truthy } from '../../../src/ivr/expr/index.js'
import { parseIvrDocument, resolveParam, type IvrElement } from '../../../src/ivr/document/index.js'
import { parsed } from './helpers.js'

const MENU = `<?xml version="1.0" encoding="UTF-8"?>
<IVR>
  <Answer/>
  <SetErrorHandler>technical_problem</SetErrorHandler>
  <GoTo>menu</GoTo>

  <Section name="menu">
    <GetDigits numDigits="1" timeout="8" maxTries="3" validDigits="123*">
      <Play>ivr/ivr-welcome.wav</Play>
      <Speak language="ja-JP">営業は1を、サポートは2を、請求については3を押してください。</Speak>
      <Speak purpose="alert">その番号は選べません。</Speak>
    </GetDigits>
    <Switch expr="Digits">
      <Case val="1"><Transfer failureAction="busy">sales</Transfer></Case>
      <Case val="2"><Transfer failureAction="busy" answerTimeout="60">support</Transfer></Case>
      <Case val="3"><Redirect>https://ivr.example.test/billing</Redirect></Case>
      <Case val="*"><GoTo>menu</GoTo></Case>
      <Default>
        <Speak>入力がありませんでした。</Speak>
        <Hangup/>
      </Default>
    </Switch>
  </Section>

  <Section name="busy">
    <Speak>ただいま電話が混み合っています ({{ TransferFailureReason }})。</Speak>
    <GoTo>menu</GoTo>
  </Section>

  <Section name="technical_problem">
    <Speak>申し訳ございません。</Speak>
    <Hangup/>
  </Section>
</IVR>`

const OFFICE_HOURS = `<Response>
  <Set var="today" expr="date()"/>
  <Cond>
    <Clause expr="today in ['2024-01-01', '2024-01-02', '2024-01-03']">
      <Play>https://media.example.test/holiday.wav</Play>
      <Hangup reason="rejected"/>
    </Clause>
    <Clause expr="weekday() GE 5">
      <Speak>We are closed at weekends.</Speak>
      <Hangup/>
    </Clause>
    <Clause expr="hour() GE 9 and (hour() LT 12 or hour() GE 13) and hour() LT 18">
      <Transfer answerTimeout="30" failureAction="https://ivr.example.test/voicemail">2001</Transfer>
    </Clause>
    <Else>
      <Speak language="en-US" voice="slt">Our office is open from 9 to 18, {{ str(hour()) }} is outside those hours.</Speak>
      <Wait length="0.5"/>
      <Hangup/>
    </Else>
  </Cond>
</Response>`

const TRANSFER_FAILURE = `<IVR>
  <Transfer callingNumber="0501230000" answerTimeout="20" failureAction="failed">alice</Transfer>
  <Section name="failed">
    <If expr="TransferFailureReason == 'busy'">
      <Then><Speak>Alice is on another call.</Speak></Then>
      <Else>
        <Switch expr="TransferFailureReason">
          <Case val="no_answer"><Speak>Alice does not answer.</Speak></Case>
          <Case val="not_registered"><Speak>Alice is offline.</Speak></Case>
          <Default><Speak>The call could not be connected.</Speak></Default>
        </Switch>
      </Else>
    </If>
    <Transfer failureAction="voicemail">sales</Transfer>
  </Section>
  <Section name="voicemail">
    <Redirect method="GET">https://ivr.example.test/voicemail?to=alice,https://backup.example.test/voicemail?to=alice</Redirect>
  </Section>
</IVR>`

const BALANCE = `<IVR>
  <GetDigits action="https://ivr.example.test/account" numDigits="8" finishOnKey="#" playBeep="true">
    <Speak>Please enter your account number, then the hash key.</Speak>
  </GetDigits>
  <GetJSON var="account" url="https://api.example.test/accounts/{{ Digits }}" method="GET"/>
  <If expr="account and account.balance GT 0">
    <Then>
      <Set var="yen" expr="int(account.balance)"/>
      <Speak>Your balance is {{ yen }} yen.</Speak>
    </Then>
    <Else><Speak>We could not find that account.</Speak></Else>
  </If>
  <Park timeout="600"/>
</IVR>`

t.test('realistic documents parse', async (t) => {
  for (const [name, xml] of Object.entries({ MENU, OFFICE_HOURS, TRANSFER_FAILURE, BALANCE })) {
    const r = parseIvrDocument(xml)
    t.ok(r.ok, `${name}: ${r.ok ? 'ok' : r.error.reason}`)
  }
  const menu = parsed(MENU)
  t.same(menu.body.map((e) => e.type), ['Answer', 'SetErrorHandler', 'GoTo'])
  t.same([...menu.sections.keys()], ['menu', 'busy', 'technical_problem'])
  const getDigits = menu.sections.get('menu')?.[0]
  t.ok(getDigits?.type === 'GetDigits' && getDigits.prompts.length === 2 && getDigits.alerts.length === 1)
})

/** Runs the Cond of OFFICE_HOURS as a runner would, at a given instant, and names the branch. */
function officeBranch(iso: string): string {
  const doc = parsed(OFFICE_HOURS)
  const env = { timeZone: 'Asia/Tokyo', now: () => new Date(iso) }
  const set = doc.body[0]
  const cond = doc.body[1]
  if (set?.type !== 'Set' || set.value.kind !== 'expr' || cond?.type !== 'Cond') throw new Error('unexpected shape')
  const today = evaluate(set.value.expr.ast, new Map(), env)
  if (!today.ok) throw new Error(today.error)
  const scope = new Map([['today', today.value]])
  const describe = (body: readonly IvrElement[]) => body.map((e) => e.type).join('+')
  for (const c of cond.clauses) {
    const v = evaluate(c.expr.ast, scope, env)
    if (!v.ok) throw new Error(v.error)
    if (truthy(v.value)) return describe(c.body)
  }
  const speak = cond.else[0]
  if (speak?.type !== 'Speak') throw new Error('unexpected shape')
  const text = resolveParam(speak.text, scope, env)
  return `${describe(cond.else)}: ${text.ok ? text.value : text.error}`
}

t.test('time-of-day routing with a fixed clock', async (t) => {
  t.equal(officeBranch('2024-03-04T10:00:00+09:00'), 'Transfer') // Monday morning
  t.equal(officeBranch('2024-03-04T12:30:00+09:00'), 'Speak+Wait+Hangup: Our office is open from 9 to 18, 12 is outside those hours.')
  t.equal(officeBranch('2024-03-04T17:59:00+09:00'), 'Transfer')
  t.equal(officeBranch('2024-03-04T18:00:00+09:00'), 'Speak+Wait+Hangup: Our office is open from 9 to 18, 18 is outside those hours.')
  t.equal(officeBranch('2024-03-09T10:00:00+09:00'), 'Speak+Hangup') // Saturday
  t.equal(officeBranch('2024-01-02T10:00:00+09:00'), 'Play+Hangup') // holiday
  // 2024-03-04 00:30 UTC is already 09:30 in Tokyo.
  t.equal(officeBranch('2024-03-04T00:30:00Z'), 'Transfer')
})

t.test('every xml example in docs/ivr.md parses', async (t) => {
  const md = readFileSync(new URL('../../../docs/ivr.md', import.meta.url), 'utf8')
  const blocks = [...md.matchAll(/```xml\n([\s\S]*?)```/g)].map((m) => m[1] as string)
  t.ok(blocks.length >= 10, `found ${blocks.length} examples`)
  for (const block of blocks) {
    const xml = /^\s*<(\?xml|IVR|Response)\b/.test(block) ? block : `<IVR>${block}</IVR>`
    const r = parseIvrDocument(xml)
    t.ok(r.ok, r.ok ? (block.split('\n')[0] ?? '') : `${r.error.reason}\n${block}`)
  }
})
