/**
 * outcome_unknown: the result when an originate reached FreeSWITCH but nothing ever told how it
 * ended (src/origination/leg-outcome.ts failedOrUnknown, src/origination/outcome.ts).
 */
import t from 'tap'
import { failedOrUnknown, newLegState, outcomeFromChannels } from '../../src/origination/leg-outcome.js'
import { OUTCOME_UNKNOWN, resultOf } from '../../src/origination/outcome.js'

t.test('no leg ever seen and no job result: outcome_unknown, never a guess', async (t) => {
  const legs = new Map([['a', newLegState()], ['b', newLegState()]])
  t.same(failedOrUnknown(legs, undefined), OUTCOME_UNKNOWN)
  t.same(outcomeFromChannels(legs, undefined), OUTCOME_UNKNOWN)
  t.same(resultOf(OUTCOME_UNKNOWN), { result_code: 500, error: { id: 'outcome_unknown', cause: 'UNKNOWN' } })
})

t.test('a leg seen, or a cause from the job: a real failure', async (t) => {
  const ended = { ...newLegState(), created: true, cause: 'USER_BUSY' }
  t.same(failedOrUnknown(new Map([['a', ended]]), undefined), { answered: false, cause: 'USER_BUSY' })
  t.same(resultOf({ answered: false, cause: 'USER_BUSY' }), { result_code: 500, error: { id: 'busy', cause: 'USER_BUSY' } })
  t.same(failedOrUnknown(new Map([['a', newLegState()]]), 'DESTINATION_OUT_OF_ORDER'), { answered: false, cause: 'DESTINATION_OUT_OF_ORDER' })
})
