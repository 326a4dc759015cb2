/**
 * The recording settings (issue 28): a domain's `recording` (defaults never / 30 days), a
 * group's and a user's own (optional, mode required), daemon.yaml's `recording.dir`; every bad
 * value refused at load with the file, the key and the rule.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { formatProblem, loadConfig } from '../../src/config/load.js'
import { recordingDirOf } from '../../src/config/recording-dir.js'

const DAEMON = 'freeswitch: { mode: simulator }\nxml_curl: { username: fs, password: xml-curl-secret }\n'
const DOMAIN = (extra: string, groupExtra = '', userExtra = '') => `name: d.test
api_tokens: [ "a-token-of-sixteen-chars" ]
channel_limit: 5
gateway: pstn
users:
  - { id: "1", name: alice, password: alice-secret${userExtra} }
groups:
  - { id: "10", name: sales, members: [ alice ]${groupExtra} }
${extra}`

async function load(t: Test, domain: string, daemon = DAEMON) {
  const dir = mkdtempSync(join(tmpdir(), 'cod-config-recording-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  mkdirSync(join(dir, 'domains'))
  writeFileSync(join(dir, 'daemon.yaml'), daemon)
  writeFileSync(join(dir, 'domains', 'd.test.yaml'), domain)
  const r = await loadConfig(join(dir, 'daemon.yaml'))
  return { dir, r, problems: r.ok ? [] : r.error.map(formatProblem) }
}

t.test('defaults: never, 30 days, no callback; groups and users without their own', async (t) => {
  const { r } = await load(t, DOMAIN(''))
  if (!r.ok) return t.fail('refused')
  const d = r.value.domains[0]
  t.same(d?.recording, { mode: 'never', retention_days: 30 })
  t.equal(d?.groups[0]?.recording, undefined)
  t.equal(d?.users[0]?.recording, undefined)
  t.equal(r.value.daemon.recording.dir, undefined)
})

t.test('every level set', async (t) => {
  const { r } = await load(
    t,
    DOMAIN('recording: { mode: on_request, retention_days: 7, callback_url: "https://rec.example.com/hook" }\n', ', recording: { mode: always, retention_days: 90 }', ', recording: { mode: never }'),
  )
  if (!r.ok) return t.fail('refused')
  const d = r.value.domains[0]
  t.same(d?.recording, { mode: 'on_request', retention_days: 7, callback_url: 'https://rec.example.com/hook' })
  t.same(d?.groups[0]?.recording, { mode: 'always', retention_days: 90 })
  t.same(d?.users[0]?.recording, { mode: 'never' })
})

t.test('bad values are refused at load, each with its key and rule', async (t) => {
  const cases: Array<[string, string, string, RegExp]> = [
    ['recording: { mode: sometimes }\n', '', '', /d\.test\.yaml: recording\.mode: must be "never", "always" or "on_request"$/],
    ['recording: { retention_days: 0 }\n', '', '', /recording\.retention_days: must be a whole number of days from 1 to 3650$/],
    ['recording: { retention_days: 1.5 }\n', '', '', /recording\.retention_days: must be a whole number of days/],
    ['recording: { retention_days: "30" }\n', '', '', /recording\.retention_days: must be a whole number of days/],
    ['recording: { retention_days: 5000 }\n', '', '', /recording\.retention_days: must be a whole number of days/],
    ['recording: { callback_url: "ftp://x.example.com" }\n', '', '', /recording\.callback_url: must be an http or https URL$/],
    ['recording: { mode: never, colour: red }\n', '', '', /recording: Unrecognized key: "colour"/],
    ['', ', recording: { retention_days: 3 }', '', /groups\[0\]\.recording\.mode: must be "never", "always" or "on_request"$/],
    ['', ', recording: { mode: loud }', '', /groups\[0\]\.recording\.mode: must be/],
    ['', '', ', recording: { mode: always, retention_days: -1 }', /users\[0\]\.recording\.retention_days: must be a whole number/],
  ]
  for (const [domain, group, user, expected] of cases) {
    const { problems } = await load(t, DOMAIN(domain, group, user))
    t.equal(problems.length, 1, `${domain}${group}${user}: one problem (${problems.join(' | ')})`)
    t.match(problems[0], expected)
  }
  const { problems } = await load(t, DOMAIN(''), `${DAEMON}recording: { dir: "" }\n`)
  t.match(problems, [/daemon\.yaml: recording\.dir: /])
  const unknown = await load(t, DOMAIN(''), `${DAEMON}recording: { folder: x }\n`)
  t.match(unknown.problems, [/daemon\.yaml: recording: Unrecognized key: "folder"/])
})

t.test('recording.dir: relative to daemon.yaml; by default `recordings` beside the journal', async (t) => {
  t.equal(recordingDirOf('/etc/cod/daemon.yaml', undefined, '/etc/cod/journal'), '/etc/cod/recordings')
  t.equal(recordingDirOf('/etc/cod/daemon.yaml', undefined, '/var/lib/cod/journal'), '/var/lib/cod/recordings', 'beside a journal placed elsewhere')
  t.equal(recordingDirOf('/etc/cod/daemon.yaml', 'rec', '/var/lib/cod/journal'), '/etc/cod/rec')
  t.equal(recordingDirOf('/etc/cod/daemon.yaml', '/srv/rec', '/var/lib/cod/journal'), '/srv/rec')
})

t.test('the shipped example: domain on_request, sales always', async (t) => {
  const r = await loadConfig('conf/daemon.yaml')
  if (!r.ok) return t.fail('refused')
  const d = r.value.domains.find((x) => x.name === 'example.test')
  t.equal(d?.recording.mode, 'on_request')
  t.same(d?.groups.find((g) => g.name === 'sales')?.recording, { mode: 'always' })
  t.equal(d?.groups.find((g) => g.name === 'support')?.recording, undefined)
})

t.test("a group's ticket_webhook: url and secret required; a bad one refused with its key", async (t) => {
  const ok = await load(t, DOMAIN('', ', ticket_webhook: { url: "https://tickets.example/hook", secret: "sixteen-chars-or-more" }'))
  if (!ok.r.ok) return t.fail(ok.problems.join('\n'))
  t.same(ok.r.value.domains[0]?.groups[0]?.ticket_webhook, { url: 'https://tickets.example/hook', secret: 'sixteen-chars-or-more' })
  for (const [bad, rule] of [
    ['{ url: "ftp://tickets.example/", secret: "sixteen-chars-or-more" }', /ticket_webhook\.url.*http or https/],
    ['{ url: "https://tickets.example/", secret: "short" }', /ticket_webhook\.secret.*at least 16/],
    ['{ url: "https://tickets.example/" }', /ticket_webhook\.secret/],
    ['{ url: "https://tickets.example/", secret: "sixteen-chars-or-more", extra: 1 }', /ticket_webhook/],
  ] as const) {
    const r = await load(t, DOMAIN('', `, ticket_webhook: ${bad}`))
    t.notOk(r.r.ok, bad)
    t.match(r.problems.join('\n'), rule, bad)
  }
})
