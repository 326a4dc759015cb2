/**
 * The monitoring docs/operations.md ships, checked by Prometheus's own tool (Debian's `prometheus`
 * package; .ci/run installs it): the alert rules load (`promtool check rules`), behave as
 * docs/prometheus/tests/ says for one daemon and for a two-node cluster (`promtool test rules`),
 * a real scrape of a running daemon is valid exposition (`promtool check metrics`), and every
 * query of the Grafana dashboard evaluates on the series of a two-node cluster, without a
 * matching error, with a legend that tells its series apart, and sums a domain over the nodes.
 * Without promtool on the PATH every test here says it skipped.
 */
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { parse, stringify } from 'yaml'
import { createMetrics, type DaemonMetrics, type MetricSources } from '../../src/metrics/index.js'
import { createLogger } from '../../src/util/logger.js'
import { startTestDaemon } from '../support/daemon.js'

t.setTimeout(120_000)

const skip = spawnSync('promtool', ['--version']).error === undefined ? false : 'promtool is not installed (apt-get install prometheus)'

interface Run {
  readonly code: number | null
  readonly out: string
}

/** promtool with `args`, `input` on its stdin; its stdout and stderr together. */
function promtool(args: readonly string[], input?: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn('promtool', args, { stdio: ['pipe', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.on('data', (c: Buffer) => (out += c.toString()))
    child.stderr.on('data', (c: Buffer) => (out += c.toString()))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, out }))
    child.stdin.end(input ?? '')
  })
}

const ALERTS = 'docs/prometheus/alerts.yml'
const ALERT_TESTS = 'docs/prometheus/tests'

interface AlertRules {
  groups: { rules: { alert: string }[] }[]
}

t.test('promtool check rules: the alert rules load', { skip }, async (t) => {
  const rules = (parse(readFileSync(ALERTS, 'utf8')) as AlertRules).groups.flatMap((g) => g.rules)
  const run = await promtool(['check', 'rules', ALERTS])
  t.equal(run.code, 0, run.out)
  t.match(run.out, `SUCCESS: ${rules.length} rules found`)
})

t.test('promtool test rules: every alert fires where docs/prometheus/tests says, one node and two', { skip }, async (t) => {
  const files = readdirSync(ALERT_TESTS)
    .filter((f) => f.endsWith('.yml'))
    .map((f) => join(ALERT_TESTS, f))
  t.ok(files.length > 0, 'unit test files')
  const run = await promtool(['test', 'rules', ...files])
  t.equal(run.code, 0, run.out)
  // Every alert has a test where it fires (a rule no test makes fire could be one that never does).
  const firing = new Set<string>()
  for (const file of files) {
    const doc = parse(readFileSync(file, 'utf8')) as { tests: { alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[] }[] }
    for (const test of doc.tests) for (const a of test.alert_rule_test ?? []) if (a.exp_alerts.length > 0) firing.add(a.alertname)
  }
  for (const { alert } of (parse(readFileSync(ALERTS, 'utf8')) as AlertRules).groups.flatMap((g) => g.rules)) t.ok(firing.has(alert), `${alert} fires in a test`)
})

/**
 * What promtool's linter says of prom-client's default process metrics, not ours: these gauges
 * count things and prom-client names them `_total`. Anything else it says fails the test.
 */
const PROM_CLIENT_FINDINGS = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']

/** The lines of the exposition that belong to the cod_ families (their HELP, TYPE and samples). */
const codLines = (text: string): string => `${text
  .split('\n')
  .filter((l) => /^(# (HELP|TYPE) )?cod_/.test(l))
  .join('\n')}\n`

t.test('promtool check metrics: the first scrape of a running daemon', { skip }, async (t) => {
  const daemon = await startTestDaemon(t, { logger: createLogger('error'), simulatorPort: 0, simulatorTimeScale: 0.05, waitLink: false })
  const res = await fetch(`${daemon.baseUrl}/metrics`)
  const text = await res.text()
  t.equal(res.status, 200)

  const whole = await promtool(['check', 'metrics'], text)
  t.not(whole.code, 1, `the exposition parses: ${whole.out}`)
  const findings = whole.out.split('\n').filter((l) => l.trim() !== '')
  for (const line of findings) t.ok(PROM_CLIENT_FINDINGS.some((name) => line.startsWith(`${name} `)), `only prom-client's own findings: ${line}`)

  const ours = await promtool(['check', 'metrics'], codLines(text))
  t.equal(ours.code, 0, `no finding on a cod_ family: ${ours.out}`)
  t.equal(ours.out.trim(), '')
})

/** Two nodes of one cluster sharing example.test (limit 10), 5 live channels each: at the limit. */
const DOMAINS = [
  { name: 'example.test', channelLimit: 10 },
  { name: 'calm.test', channelLimit: 20 },
]

function node(live: ReadonlyMap<string, number>): DaemonMetrics {
  const sources: MetricSources = {
    domains: () => DOMAINS,
    liveChannels: () => live,
    eslConnected: () => true,
    callbacks: () => ({ queued: 2, inFlight: 1, oldestPendingAt: Date.now() - 30_000, delivered: 4, retried: 1, deadLettered: 1 }),
    journal: () => ({ bytes: 4096, deadLetters: 1, pendingResults: 3, openRequests: 1, writeErrors: 0 }),
  }
  const m = createMetrics({ prefix: '/api', sources })
  // What a node counts while it works: a call, a refusal, an IVR fetch, an xml_curl fetch, an event.
  m.request({ operation: 'call_user', path: '/api/call_user', status: 200, errorId: undefined, domain: 'example.test', seconds: 0.2, originateSeconds: 0.1 })
  m.request({ operation: 'call_user', path: '/api/call_user', status: 429, errorId: 'channel_limit_reached', domain: 'example.test', seconds: 0.01, originateSeconds: undefined })
  m.ivrFetch('document', 'ok')
  m.xmlCurl({ section: 'dialplan', outcome: 'found', seconds: 0.002 })
  m.eslEvent({ 'Event-Date-Timestamp': String((Date.now() - 3) * 1000) })
  return m
}

/** Half an hour of one sample a minute: counters grow by their value each minute, gauges stay. */
const MINUTES = 30

/** promtool input_series from a text exposition, each labelled as a target of job "cod". */
function inputSeries(text: string, instance: string): { series: string; values: string }[] {
  const types = new Map<string, string>()
  const series: { series: string; values: string }[] = []
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line)
    if (type?.[1] !== undefined && type[2] !== undefined) types.set(type[1], type[2])
    const sample = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (sample === null) continue
    const [, name = '', labels, raw = ''] = sample
    const value = Number(raw)
    if (!Number.isFinite(value)) continue
    const family = types.has(name) ? name : name.replace(/_(bucket|sum|count)$/, '')
    const growing = types.get(family) === 'counter' || types.get(family) === 'histogram'
    const all = [labels, `job="cod"`, `instance="${instance}"`].filter((l) => l !== undefined && l !== '').join(',')
    series.push({ series: `${name}{${all}}`, values: growing ? `0+${value}x${MINUTES}` : `${value}x${MINUTES}` })
  }
  return series
}

interface Dashboard {
  panels: { type: string; title: string; targets?: { refId: string; expr: string; legendFormat?: string }[] }[]
}

/**
 * A dashboard query as Grafana sends it: this job, and the domain variable's "All", which is the
 * values of label_values(cod_channel_limit, domain) as one regex (the configured domains only).
 */
const asSent = (expr: string): string => expr.replaceAll('$job', 'cod').replaceAll('$domain', `(${DOMAINS.map((d) => d.name).join('|')})`)

t.test('the dashboard\'s queries on a two-node cluster: they evaluate, their series are told apart, a domain is summed', { skip }, async (t) => {
  const n1 = node(new Map([['example.test', 5]]))
  const n2 = node(new Map([['example.test', 5], ['stranger.test', 2]]))
  t.teardown(() => {
    n1.close()
    n2.close()
  })
  const input = [...inputSeries(await n1.render(), 'n1:8080'), ...inputSeries(await n2.render(), 'n2:8080')]
  const dashboard = JSON.parse(readFileSync('docs/grafana/cod-overview.json', 'utf8')) as Dashboard
  const targets = dashboard.panels.flatMap((p) => (p.targets ?? []).map((target) => ({ panel: p.title, ...target })))
  t.ok(targets.length >= 20, `${targets.length} queries`)

  const evalTime = `${MINUTES}m`
  const tests = targets.map(({ panel, refId, expr, legendFormat }) => {
    // The labels the legend shows: grouping by them must leave as many series as the query has.
    const shown = [...(legendFormat ?? '').matchAll(/\{\{\s*(\w+)\s*\}\}/g)].map((m) => m[1])
    const q = asSent(expr)
    return {
      // promtool's expression tests have no name: a PromQL comment names the panel in its report.
      expr: `# ${panel} ${refId}\ncount(${q}) == bool count(count by (${shown.join(', ')}) (${q}))`,
      eval_time: evalTime,
      exp_samples: [{ labels: '{}', value: 1 }],
    }
  })
  const query = (title: string, refId: string): string => asSent(targets.find((x) => x.panel === title && x.refId === refId)?.expr ?? 'absent(nothing)')
  // The limit holds for the sum over the nodes (docs/cluster.md): 5 + 5 of 10 is saturation 1.
  tests.push({ expr: query('Limit saturation', 'A'), eval_time: evalTime, exp_samples: [{ labels: '{domain="example.test"}', value: 1 }, { labels: '{domain="calm.test"}', value: 0 }] })
  tests.push({ expr: query('Live channels and channel_limit', 'A'), eval_time: evalTime, exp_samples: [{ labels: '{domain="example.test"}', value: 10 }, { labels: '{domain="calm.test"}', value: 0 }] })
  tests.push({ expr: query('Live channels and channel_limit', 'B'), eval_time: evalTime, exp_samples: [{ labels: '{domain="example.test"}', value: 10 }, { labels: '{domain="calm.test"}', value: 20 }] })

  const dir = mkdtempSync(join(tmpdir(), 'cod-promtool-dashboard-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'dashboard.test.yml')
  writeFileSync(file, stringify({ evaluation_interval: '1m', tests: [{ name: 'dashboard on two nodes', interval: '1m', input_series: input, promql_expr_test: tests }] }, { lineWidth: 0 }))
  const run = await promtool(['test', 'rules', file])
  t.equal(run.code, 0, run.out)
  t.notMatch(run.out, /many-to-many/)
})
