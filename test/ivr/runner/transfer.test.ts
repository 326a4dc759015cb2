/** Transfer: the dialplan's route actions, connected calls, failures, failureAction, hunts, PSTN. */
import t from 'tap'
import { failureReason } from '../../../src/ivr/elements/index.js'
import type { ExecReply, ExecRecord } from '../../support/fake-pbx.js'
import { DOMAIN, kills, runInline, wrap } from './helpers.js'

const RINGBACK = 'set ringback=%(2000,4000,440,480)'
const PREFIX = ['set hangup_after_bridge=true', 'set continue_on_fail=true', `export cod_domain=${DOMAIN}`, 'export nolocal:cod_role=destination']

/** Each bridge in turn: a cause (failed) or 'connect'. */
const bridges =
  (...results: string[]) =>
  (rec: ExecRecord): ExecReply | undefined => {
    if (rec.app !== 'bridge') return undefined
    const r = results.shift() ?? 'NO_ANSWER'
    if (r === 'connect') return { kind: 'bridged', vars: { originate_disposition: 'SUCCESS' } }
    return { kind: 'complete', vars: { originate_disposition: r, originate_failed_cause: r, DIALSTATUS: r } }
  }

const spoken = (r: { pbx: { apps(): string[] } }): string[] =>
  r.pbx.apps().filter((a) => a.startsWith('speak ')).map((a) => a.slice('speak flite|kal|'.length))

t.test('causes map to TransferFailureReason as the API callbacks map them', async (t) => {
  t.equal(failureReason('USER_BUSY'), 'busy')
  t.equal(failureReason('NO_ANSWER'), 'no_answer')
  t.equal(failureReason('NO_USER_RESPONSE'), 'no_answer')
  t.equal(failureReason('CALL_REJECTED'), 'rejected')
  t.equal(failureReason('USER_NOT_REGISTERED'), 'not_registered')
  t.equal(failureReason('SUBSCRIBER_ABSENT'), 'not_registered')
  t.equal(failureReason('ORIGINATOR_CANCEL'), 'failed')
  t.equal(failureReason('NORMAL_TEMPORARY_FAILURE'), 'failed')
})

t.test('to a user: the dialplan route, answerTimeout as call_timeout; connected → the session ends, no hangup of ours', async (t) => {
  const r = await runInline(t, wrap('<Transfer answerTimeout="20">bob</Transfer><Speak>never</Speak>'), { script: bridges('connect') })
  t.same(r.pbx.apps(), ['set call_timeout=20', ...PREFIX, 'export nolocal:cod_user_id=2', RINGBACK, 'bridge user/bob@example.test'])
  t.same(kills(r), [], 'FreeSWITCH hangs up after the bridge (hangup_after_bridge), not the runner')
  t.notOk(r.pbx.isUp(r.uuid))
})

t.test('a user by extension or DID; default answerTimeout 30', async (t) => {
  const r = await runInline(t, wrap('<Transfer>1002</Transfer>'), { script: bridges('connect') })
  t.same(r.pbx.apps().slice(0, 1), ['set call_timeout=30'])
  t.equal(r.pbx.apps().at(-1), 'bridge user/bob@example.test')
  const d = await runInline(t, wrap('<Transfer>0501230001</Transfer>'), { script: bridges('connect') })
  t.equal(d.pbx.apps().at(-1), 'bridge user/alice@example.test')
})

t.test('failure without failureAction: TransferFailureReason set, the next element runs', async (t) => {
  for (const [cause, reason] of [
    ['USER_BUSY', 'busy'],
    ['NO_ANSWER', 'no_answer'],
    ['CALL_REJECTED', 'rejected'],
    ['USER_NOT_REGISTERED', 'not_registered'],
    ['DESTINATION_OUT_OF_ORDER', 'failed'],
  ] as const) {
    const r = await runInline(t, wrap('<Transfer>bob</Transfer><Speak>{{ TransferFailureReason }}</Speak>'), { script: bridges(cause) })
    t.same(spoken(r), [reason], cause)
    t.notOk(r.pbx.apps().some((a) => a.startsWith('hangup')), 'the dialplan hangup is never run')
    t.same(kills(r), ['NORMAL_CLEARING'])
  }
})

t.test('failureAction naming a Section', async (t) => {
  const r = await runInline(
    t,
    wrap('<Transfer failureAction="busy">bob</Transfer><Speak>never</Speak><Section name="busy"><Speak>sorry {{ TransferFailureReason }}</Speak></Section>'),
    { script: bridges('USER_BUSY') },
  )
  t.same(spoken(r), ['sorry busy'])
})

t.test('failureAction URL list: POST with TransferFailureReason, the document replaces this one', async (t) => {
  const url = 'https://app.example.test/failed'
  const r = await runInline(t, wrap(`<Transfer failureAction="https://down.example.test/a,${url}">bob</Transfer><Speak>never</Speak>`), {
    script: bridges('NO_ANSWER'),
    docs: { [url]: wrap('<Speak>fallback</Speak>') },
  })
  t.same(spoken(r), ['fallback'])
  const req = r.fetcher.requests[0]
  t.same(req?.urls, ['https://down.example.test/a', url])
  t.equal(req?.method, 'POST')
  t.equal(req?.params.TransferFailureReason, 'no_answer')
})

t.test('a group: the hunt of the dialplan, bounded by answerTimeout; the first member that answers wins', async (t) => {
  const r = await runInline(t, wrap('<Transfer answerTimeout="20">sales</Transfer>'), { script: bridges('USER_BUSY', 'connect') })
  t.same(r.pbx.apps(), [
    'set call_timeout=20',
    ...PREFIX,
    'export nolocal:cod_group_id=10',
    'export nolocal:cod_group_name=sales',
    RINGBACK,
    'export nolocal:cod_user_id=3',
    'set call_timeout=15',
    'bridge [leg_timeout=15]user/carol@example.test',
    'export nolocal:cod_user_id=1',
    'set call_timeout=5',
    'bridge [leg_timeout=5]user/alice@example.test',
  ])
  t.same(kills(r), [])
})

t.test('a group where nobody answers: the last cause; a group without members: failed', async (t) => {
  const r = await runInline(t, wrap('<Transfer>sales</Transfer><Speak>{{ TransferFailureReason }}</Speak>'), {
    script: bridges('USER_BUSY', 'NO_ANSWER', 'NO_ANSWER'),
  })
  t.equal(r.pbx.apps().filter((a) => a.startsWith('bridge')).length, 2, '30 s: carol 15 s, alice 15 s, no time left for bob')
  t.same(spoken(r), ['no_answer'])
  const e = await runInline(t, wrap('<Transfer>empty</Transfer><Speak>{{ TransferFailureReason }}</Speak>'))
  t.notOk(e.pbx.apps().some((a) => a.startsWith('bridge') || a.startsWith('hangup')))
  t.same(spoken(e), ['failed'])
})

t.test('PSTN: through the gateway, presenting callingNumber; by default the caller DID', async (t) => {
  const r = await runInline(t, wrap('<Transfer callingNumber="0501230000">0311112222</Transfer>'), { script: bridges('connect') })
  t.same(r.pbx.apps().slice(-3), ['set effective_caller_id_number=0501230000', RINGBACK, 'bridge sofia/gateway/pstn/0311112222'])
  const d = await runInline(t, wrap('<Transfer>+81311112222</Transfer>'), { script: bridges('connect') })
  t.same(d.pbx.apps().slice(-3), ['set effective_caller_id_number=0501230001', RINGBACK, 'bridge sofia/gateway/pstn/+81311112222'])
})

t.test('callingNumber must be one of the domain calling numbers: a runtime error, nothing dialled', async (t) => {
  const r = await runInline(t, wrap('<Transfer callingNumber="0509999999">0311112222</Transfer><Speak>never</Speak>'))
  t.same(r.pbx.apps(), [])
  t.same(kills(r), ['NORMAL_TEMPORARY_FAILURE'])
})

t.test('a target that names nothing of the domain is a runtime error', async (t) => {
  const r = await runInline(t, wrap('<SetErrorHandler>e</SetErrorHandler><Transfer>nobody</Transfer><Section name="e"><Speak>{{ Error }}</Speak></Section>'))
  t.match(spoken(r)[0], /Transfer: "nobody" is no user, group, extension, DID or number of example\.test/)
  t.notOk(r.pbx.apps().some((a) => a.startsWith('bridge')))
})

t.test('an extension bound to an XML URL: its document replaces this one', async (t) => {
  const r = await runInline(t, wrap('<Transfer>3002</Transfer><Speak>never</Speak>'), {
    docs: { 'https://ivr.example.test/other': wrap('<Speak>other menu</Speak>') },
  })
  t.same(spoken(r), ['other menu'])
  t.same(r.fetcher.requests[0]?.urls, ['https://ivr.example.test/other'])
})

t.test('a template target is checked before anything is dialled', async (t) => {
  const r = await runInline(t, wrap(`<Set var="x" val="bob,alice"/><Transfer>{{ x }}</Transfer>`))
  t.same(r.pbx.apps(), [])
  t.same(kills(r), ['NORMAL_TEMPORARY_FAILURE'])
})

t.test('the caller hangs up while the transfer rings: nothing more is run', async (t) => {
  const r = await runInline(t, wrap('<Transfer failureAction="s">bob</Transfer><Section name="s"><Speak>never</Speak></Section>'), {
    script: (rec) => (rec.app === 'bridge' ? { kind: 'hangup' } : undefined),
  })
  t.equal(r.pbx.apps().at(-1), 'bridge user/bob@example.test')
  t.same(kills(r), [])
})
