/**
 * The finished calls table and the chart of the live calls page (src/ui/static/finished.js,
 * chart.js) without a browser: the text of each cell of a finished call, and the chart's
 * geometry (the hour's window, the y scale above both lines, samples outside the hour left out).
 * The page files are plain JavaScript for the browser, imported by URL and given their shape here.
 */
import t from 'tap'

interface FinishedModule {
  finishedRows(calls: unknown, nowMs: number): Array<Record<string, string>>
  secondsText(s: unknown): string
}
interface Geometry {
  live: string
  limit: string
  yMax: number
  yLines: Array<{ value: number; y: number }>
  xLines: Array<{ label: string; x: number }>
  spanMs: number
  count: number
  last: { at: number; live: number; limit: number } | undefined
}
interface ChartModule {
  chartGeometry(samples: unknown, nowMs: number): Geometry
}

const NOW = Date.UTC(2026, 10, 28, 12, 0, 0)

t.test('finished calls: the cells of each call', async (t) => {
  const m = (await import(new URL('../../src/ui/static/finished.js', import.meta.url).href)) as FinishedModule
  t.equal(m.secondsText(0), '0:00')
  t.equal(m.secondsText(65), '1:05')
  t.equal(m.secondsText(3725), '1:02:05')
  t.equal(m.secondsText('x'), '0:00', 'not a number: nothing to show but zero')
  const call = {
    id: 'a', request_id: 'r', operation: 'call_user', parties: ['alice', '0311112222'], outcome: 'no_answer',
    started_at: NOW - 40_000, answered_at: null, ended_at: NOW - 5_000, duration_s: 35, talk_s: 0, hangup_cause: 'NO_ANSWER', legs: 2,
  }
  const [row] = m.finishedRows([call, null, { no: 'id' }], NOW)
  t.match(row, { id: 'a', parties: 'alice → 0311112222', outcome: 'no answer', outcomeKey: 'no_answer', duration: '0:35', talk: '0:00', cause: 'NO_ANSWER' })
  t.match(row?.ended, /^\d\d:\d\d:\d\d$/, 'today: the time of day only')
  t.equal(m.finishedRows([call, null, { no: 'id' }], NOW).length, 1, 'entries that are not calls are left out')
  const [old] = m.finishedRows([{ ...call, ended_at: NOW - 3 * 86_400_000, parties: [], hangup_cause: null }], NOW)
  t.match(old, { ended: /^2026-11-25 /, parties: '—', cause: '—' }, 'another day shows its date; missing values show a dash')
  t.same(m.finishedRows(undefined, NOW), [], 'no list, no rows')
})

t.test('the chart: an hour (or since the first sample), a y scale above both lines', async (t) => {
  const m = (await import(new URL('../../src/ui/static/chart.js', import.meta.url).href)) as ChartModule
  const empty = m.chartGeometry([], NOW)
  t.match(empty, { count: 0, live: '', limit: '', last: undefined, spanMs: 60_000 }, 'no samples: an empty minute')
  t.same(empty.yLines.map((l) => l.value), [0, 1, 2], 'a scale of at least 1')

  const samples = []
  for (let i = 0; i < 400; i++) samples.push({ at: NOW - (399 - i) * 10_000, live: i % 30, limit: 20 })
  const g = m.chartGeometry(samples, NOW)
  t.equal(g.count, 360, 'samples older than the hour are left out')
  t.equal(g.spanMs, 3_590_000, 'the hour (its oldest sample is 59 min 50 s old)')
  t.equal(g.yMax, 40, 'above the largest count (29) and the limit, on a round step')
  t.same(g.yLines.map((l) => l.value), [0, 10, 20, 30, 40])
  t.same(g.xLines.map((l) => l.label), ['−60 min', '−45 min', '−30 min', '−15 min', 'now'])
  t.same(g.last, samples.at(-1), 'the newest sample, for the caption')
  const points = g.limit.split(' ').map((p) => p.split(',').map(Number))
  t.ok(points.every(([, y]) => y === points[0]?.[1]), 'a constant limit is a flat line')
  t.ok(points.every(([x], i) => i === 0 || (x ?? 0) > (points[i - 1]?.[0] ?? 0)), 'time runs left to right')
  const lastX = points.at(-1)?.[0] ?? 0
  t.equal(lastX, 712, 'now is the right edge')

  const young = m.chartGeometry([{ at: NOW - 90_000, live: 1, limit: 4 }, { at: NOW, live: 2, limit: 4 }], NOW)
  t.equal(young.spanMs, 90_000, 'a daemon up for 90 s: the axis spans its samples')
  t.same(young.xLines.map((l) => l.label), ['−90 s', '−68 s', '−45 s', '−23 s', 'now'])
  t.equal(young.limit.split(' ')[0]?.split(',')[0], '36', 'the first sample at the left edge')
})
