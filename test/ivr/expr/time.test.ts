import t from 'tap'
import type { EvalEnv } from '../../../src/ivr/expr/index.js'
import { clockParts } from '../../../src/ivr/expr/time.js'
import { run } from './helpers.js'

const at = (iso: string, timeZone: string): EvalEnv => ({ timeZone, now: () => new Date(iso) })
const value = (src: string, env: EvalEnv) => {
  const r = run(src, new Map(), env)
  return r.ok ? r.value : `error: ${r.error}`
}

t.test('one instant, two time zones', async (t) => {
  // Monday 2024-03-04 23:30 UTC = Tuesday 08:30 in Tokyo = Monday 15:30 in Los Angeles (PST).
  const tokyo = at('2024-03-04T23:30:00Z', 'Asia/Tokyo')
  const la = at('2024-03-04T23:30:00Z', 'America/Los_Angeles')
  t.equal(value('hour()', tokyo), 8)
  t.equal(value('minute()', tokyo), 30)
  t.equal(value('weekday()', tokyo), 1)
  t.equal(value('date()', tokyo), '2024-03-05')
  t.equal(value('hour()', la), 15)
  t.equal(value('minute()', la), 30)
  t.equal(value('weekday()', la), 0)
  t.equal(value('date()', la), '2024-03-04')
})

t.test('weekday: 0 is Monday, 6 is Sunday', async (t) => {
  const days = ['2024-03-04', '2024-03-05', '2024-03-06', '2024-03-07', '2024-03-08', '2024-03-09', '2024-03-10']
  days.forEach((d, i) => t.equal(value('weekday()', at(`${d}T12:00:00+09:00`, 'Asia/Tokyo')), i, d))
})

t.test('midnight is hour 0, not 24', async (t) => {
  t.equal(value('hour()', at('2024-01-01T00:00:00+09:00', 'Asia/Tokyo')), 0)
  t.equal(value('hour()', at('2024-01-01T23:59:00+09:00', 'Asia/Tokyo')), 23)
  t.equal(value('minute()', at('2024-01-01T23:59:00+09:00', 'Asia/Tokyo')), 59)
})

t.test('daylight saving time is applied', async (t) => {
  // 2024-07-01 12:00 UTC: 08:00 in New York (EDT, UTC-4); 2024-01-01 12:00 UTC: 07:00 (EST).
  t.equal(value('hour()', at('2024-07-01T12:00:00Z', 'America/New_York')), 8)
  t.equal(value('hour()', at('2024-01-01T12:00:00Z', 'America/New_York')), 7)
})

t.test('the clock is read at evaluation, not at parse', async (t) => {
  let now = new Date('2024-03-04T00:00:00Z')
  const env: EvalEnv = { timeZone: 'UTC', now: () => now }
  t.equal(value('hour()', env), 0)
  now = new Date('2024-03-04T17:00:00Z')
  t.equal(value('hour()', env), 17)
})

t.test('office-hours routing expression', async (t) => {
  const open = "weekday() LT 5 and hour() GE 9 and hour() LT 18 and date() not in ['2024-01-01']"
  t.equal(value(open, at('2024-03-04T10:00:00+09:00', 'Asia/Tokyo')), true) // Monday 10:00
  t.equal(value(open, at('2024-03-04T18:00:00+09:00', 'Asia/Tokyo')), false) // Monday 18:00
  t.equal(value(open, at('2024-03-09T10:00:00+09:00', 'Asia/Tokyo')), false) // Saturday
  t.equal(value(open, at('2024-01-01T10:00:00+09:00', 'Asia/Tokyo')), false) // holiday (a Monday)
})

t.test('bad time zones and clocks are error values', async (t) => {
  t.match(value('hour()', at('2024-03-04T00:00:00Z', 'Mars/Olympus')), /hour\(\): unknown time zone "Mars\/Olympus"/)
  t.match(value('date()', { timeZone: 'UTC', now: () => new Date('garbage') }), /invalid date/)
  t.match(clockParts(new Date(8.64e15), 'UTC'), { ok: false })
  t.same(clockParts(new Date('2024-03-04T05:06:00Z'), 'UTC'), { ok: true, value: { date: '2024-03-04', hour: 5, minute: 6, weekday: 0 } })
})
