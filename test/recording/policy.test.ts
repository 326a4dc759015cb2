/**
 * The recording policy (src/recording/policy.ts): every row of issue 28's table, for every place
 * the policy may come from, and which place wins.
 */
import t from 'tap'
import type { RecordingMode } from '../../src/config/schema.js'
import { decideRecording, type RecordingQuestion } from '../../src/recording/policy.js'

const domain = (mode: RecordingMode, retention_days = 30) => ({ name: 'example.test', recording: { mode, retention_days } })

type Expected = 'recorded' | 'not recorded' | 'refused'
const TABLE: ReadonlyArray<[RecordingMode, boolean | undefined, Expected]> = [
  ['never', undefined, 'not recorded'],
  ['never', true, 'refused'],
  ['never', false, 'not recorded'],
  ['on_request', undefined, 'not recorded'],
  ['on_request', true, 'recorded'],
  ['on_request', false, 'not recorded'],
  ['always', undefined, 'recorded'],
  ['always', true, 'recorded'],
  ['always', false, 'refused'],
]

const outcome = (q: RecordingQuestion): Expected => {
  const d = decideRecording(q)
  if (!d.ok) {
    if (d.error.reason !== 'recording_not_allowed') throw new Error('another refusal')
    return 'refused'
  }
  return d.value.record ? 'recorded' : 'not recorded'
}

t.test('every row of the table, whichever place the mode comes from', async (t) => {
  for (const [mode, requested, expected] of TABLE) {
    const other: RecordingMode = mode === 'never' ? 'always' : 'never'
    t.equal(outcome({ domain: domain(mode), requested }), expected, `domain ${mode}, record ${String(requested)}`)
    t.equal(outcome({ domain: domain(other), user: { name: 'alice', recording: { mode } }, requested }), expected, `user ${mode} over domain ${other}`)
    t.equal(
      outcome({ domain: domain(other), group: { name: 'sales', recording: { mode } }, user: { name: 'alice', recording: { mode: other } }, requested }),
      expected,
      `group ${mode} over user and domain ${other}`,
    )
  }
})

t.test('a group or user without a policy of its own inherits; the most specific set one wins', async (t) => {
  t.equal(outcome({ domain: domain('always'), group: { name: 'sales' }, user: { name: 'alice' }, requested: undefined }), 'recorded', 'nothing set below: the domain')
  t.equal(outcome({ domain: domain('always'), group: { name: 'sales' }, user: { name: 'alice', recording: { mode: 'never' } }, requested: undefined }), 'not recorded', 'group unset: the user')
  t.equal(outcome({ domain: domain('never'), group: { name: 'sales', recording: { mode: 'always' } }, requested: false }), 'refused', "a call for an always group cannot say false")
})

t.test('retention and who decided follow the same order; refusals say whose mode', async (t) => {
  const byGroup = decideRecording({ domain: domain('never', 10), group: { name: 'sales', recording: { mode: 'always', retention_days: 90 } }, requested: undefined })
  t.same(byGroup, { ok: true, value: { record: true, retentionDays: 90, decidedBy: 'group sales' } })
  const inherits = decideRecording({ domain: domain('never', 10), user: { name: 'alice', recording: { mode: 'on_request' } }, requested: true })
  t.same(inherits, { ok: true, value: { record: true, retentionDays: 10, decidedBy: 'user alice' } }, "the user's mode, the domain's retention")
  const refused = decideRecording({ domain: domain('never'), requested: true })
  t.equal(refused.ok, false)
  if (!refused.ok) t.match(refused.error.description, /^record: the recording mode of domain example\.test is never$/)
  const alwaysRefused = decideRecording({ domain: domain('on_request'), group: { name: 'sales', recording: { mode: 'always' } }, requested: false })
  if (!alwaysRefused.ok) t.match(alwaysRefused.error.description, /group sales is always/)
  else t.fail('record: false under always must be refused')
})
