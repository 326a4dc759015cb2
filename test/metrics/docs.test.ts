/**
 * The Grafana dashboard (docs/grafana/cod-overview.json) and the Prometheus alert rules
 * (docs/prometheus/alerts.yml) that docs/operations.md ships: they parse, and every metric they
 * query exists in the daemon's registry, with the labels their selectors use (a renamed metric
 * or label would otherwise leave an empty panel or an alert that never fires). The alerts the
 * issue asks for are there: ESL down, limit saturation, callbacks backing up, dead letters.
 */
import { readFileSync } from 'node:fs'
import t, { type Test } from 'tap'
import { parse } from 'yaml'
import { createMetrics } from '../../src/metrics/index.js'
import { FAMILIES } from './expected.js'

/** Metrics Prometheus makes itself, not the daemon. */
const PROMETHEUS_OWN = new Set(['up'])

interface Family {
  readonly type: string
  readonly labels: ReadonlySet<string>
}

async function registryFamilies(): Promise<Map<string, Family>> {
  const m = createMetrics({
    prefix: '/api',
    sources: {
      domains: () => [],
      liveChannels: () => new Map(),
      eslConnected: () => true,
      callbacks: () => ({ queued: 0, inFlight: 0, oldestPendingAt: undefined, delivered: 0, retried: 0, deadLettered: 0 }),
      journal: () => ({ bytes: 0, deadLetters: 0, pendingResults: 0, openRequests: 0, writeErrors: 0 }),
    },
  })
  await m.render()
  const families = new Map<string, Family>()
  for (const metric of m.registry.getMetricsAsArray()) {
    const { name, type, labelNames } = metric as unknown as { name: string; type: string; labelNames?: string[] }
    families.set(name, { type: String(type), labels: new Set(labelNames ?? []) })
  }
  m.close()
  return families
}

/** The family a series name belongs to (histogram series end in _bucket, _sum, _count). */
function familyOf(name: string, families: Map<string, Family>): [string, Family] | undefined {
  const direct = families.get(name)
  if (direct !== undefined) return [name, direct]
  const m = /^(.*)_(bucket|sum|count)$/.exec(name)
  const base = m?.[1] === undefined ? undefined : families.get(m[1])
  return base !== undefined && (base.type === 'histogram' || base.type === 'summary') && m?.[1] !== undefined ? [m[1], base] : undefined
}

function checkExpr(t: Test, expr: string, where: string, families: Map<string, Family>): void {
  const names = [...expr.matchAll(/\b((?:cod|process|nodejs)_[a-z0-9_]+|up)\b(\{[^}]*\})?/g)]
  t.ok(names.length > 0, `${where}: queries a metric`)
  for (const [, name = '', selector] of names) {
    if (PROMETHEUS_OWN.has(name)) continue
    const family = familyOf(name, families)
    t.ok(family, `${where}: ${name} exists`)
    if (family === undefined || selector === undefined) continue
    for (const [, label = ''] of selector.matchAll(/(\w+)\s*(?:=~|!~|!=|=)/g)) {
      const ok = family[1].labels.has(label) || (label === 'le' && family[1].type === 'histogram') || label === 'job' || label === 'instance'
      t.ok(ok, `${where}: ${name} has label ${label}`)
    }
  }
}

t.test('the families docs/operations.md lists are the registry\'s', async (t) => {
  const families = await registryFamilies()
  for (const f of FAMILIES) t.ok(families.has(f), `${f} is registered`)
  const ours = [...families.keys()].filter((n) => n.startsWith('cod_'))
  t.same(ours.sort(), FAMILIES.filter((f) => f.startsWith('cod_')).sort(), 'and no cod_ family is left out of the list')
  const doc = readFileSync('docs/operations.md', 'utf8')
  for (const f of ours) t.match(doc, `\`${f}\``, `docs/operations.md describes ${f}`)
})

t.test('the Grafana dashboard parses and queries only metrics that exist', async (t) => {
  const families = await registryFamilies()
  const dashboard = JSON.parse(readFileSync('docs/grafana/cod-overview.json', 'utf8')) as {
    uid: string
    panels: { id: number; type: string; title: string; gridPos: { x: number; w: number }; targets?: { expr: string }[] }[]
    templating: { list: { name: string; query: unknown }[] }
  }
  t.ok(dashboard.uid)
  t.equal(new Set(dashboard.panels.map((p) => p.id)).size, dashboard.panels.length, 'panel ids are unique')
  const panels = dashboard.panels.filter((p) => p.type !== 'row')
  t.ok(panels.length >= 15, `${panels.length} panels`)
  for (const p of panels) {
    t.ok(p.gridPos.x + p.gridPos.w <= 24, `${p.title} fits the grid`)
    t.ok((p.targets ?? []).length > 0, `${p.title} has a query`)
    for (const target of p.targets ?? []) checkExpr(t, target.expr, `panel "${p.title}"`, families)
  }
  for (const name of ['job', 'domain']) {
    const variable = dashboard.templating.list.find((v) => v.name === name)
    checkExpr(t, JSON.stringify(variable?.query), `variable ${name}`, families)
  }
})

t.test('the alert rules parse, name only metrics that exist, and cover what operators page on', async (t) => {
  const families = await registryFamilies()
  const rules = parse(readFileSync('docs/prometheus/alerts.yml', 'utf8')) as {
    groups: { name: string; rules: { alert: string; expr: string; for?: string; labels: { severity: string }; annotations: { summary: string } }[] }[]
  }
  const all = rules.groups.flatMap((g) => g.rules)
  for (const r of all) {
    t.match(r.alert, /^Cod[A-Za-z]+$/, `${r.alert}: a name`)
    t.ok(['critical', 'warning', 'info'].includes(r.labels.severity), `${r.alert}: severity ${r.labels.severity}`)
    t.ok(r.annotations.summary, `${r.alert}: a summary`)
    if (r.for !== undefined) t.match(r.for, /^\d+[smh]$/, `${r.alert}: for ${r.for}`)
    checkExpr(t, r.expr, `alert ${r.alert}`, families)
  }
  // The saturation docs/operations.md "In a cluster" explains is the one the alert computes.
  const saturation = all.find((r) => r.alert === 'CodChannelLimitSaturation')?.expr.replace(/\s*>\s*[\d.]+$/, '')
  t.ok(saturation?.includes('sum by (job, domain) (cod_channels_live)'), 'saturation sums the nodes\' live channels')
  t.match(readFileSync('docs/operations.md', 'utf8').replace(/\s+/g, ' '), `\`${saturation}\``, 'docs/operations.md states the alert\'s saturation')
  const names = new Set(all.map((r) => r.alert))
  for (const required of ['CodEslDown', 'CodChannelLimitSaturation', 'CodCallbacksBackingUp', 'CodDeadLetters']) t.ok(names.has(required), `${required} is there`)
  t.equal(names.size, all.length, 'alert names are unique')
})
