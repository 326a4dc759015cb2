/**
 * deploy/systemd/cod.service (docs/deploy.md "The systemd way"): `systemd-analyze verify` accepts
 * it without a word (verify exits 0 on unknown keys and bad values, only warning: any output
 * counts as a failure here, and broken copies show the check fails); it has the settings the
 * deployment relies on (its own user, state in /var/lib/cod, reload by SIGHUP, the hardening,
 * no MemoryDenyWriteExecute, a stop timeout above the daemon's graceful stop); and
 * deploy/systemd/daemon.yaml loads and puts the journal in the unit's StateDirectory.
 * The exposure score of `systemd-analyze security --offline=yes` stays at 2.0 or below (1.4 when written).
 */
import { execFile } from 'node:child_process'
import { cpSync, copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { loadConfig } from '../../src/config/load.js'
import { journalDirOf } from '../../src/journal/index.js'
import { ROOT, tempDir } from '../cli/run-cod.js'

const UNIT = join(ROOT, 'deploy/systemd/cod.service')
const EXAMPLE_CONFIG = join(ROOT, 'deploy/systemd/daemon.yaml')
const SYSTEMD_ANALYZE = '/usr/bin/systemd-analyze'

t.setTimeout(120_000)

interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

const run = (file: string, args: readonly string[]): Promise<Run> =>
  new Promise((resolve) => {
    execFile(file, args, { timeout: 60_000 }, (e, stdout, stderr) => {
      const code = e === null ? 0 : typeof e.code === 'number' ? e.code : 1
      resolve({ code, stdout, stderr })
    })
  })

/** The unit's keys, section by section; a key given several times keeps every value in order. */
function parseUnit(text: string): Map<string, string[]> {
  const keys = new Map<string, string[]>()
  let section = ''
  for (const raw of text.split('\n')) {
    const line = raw.trim()
    if (line === '' || line.startsWith('#')) continue
    const header = /^\[(\w+)\]$/.exec(line)
    if (header !== null) {
      section = header[1] ?? ''
      continue
    }
    const eq = line.indexOf('=')
    const key = `${section}.${line.slice(0, eq)}`
    keys.set(key, [...(keys.get(key) ?? []), line.slice(eq + 1)])
  }
  return keys
}

/**
 * A copy of the unit, in a folder of its own, whose ExecStart runs this test's node (CI's node
 * may not be /usr/bin/node: verify checks that the program exists), verified. Returns what verify
 * said: nothing at all for a good unit.
 */
async function verify(t: Parameters<typeof tempDir>[0], unitText: string): Promise<string[]> {
  const dir = tempDir(t, 'systemd')
  const file = join(dir, 'cod.service')
  writeFileSync(file, unitText.replaceAll('/usr/bin/node ', `${process.execPath} `))
  const r = await run(SYSTEMD_ANALYZE, ['verify', '--man=no', file])
  const said = `${r.stdout}${r.stderr}`.split('\n').filter((l) => l.trim() !== '')
  return r.code === 0 ? said : [`exit ${r.code}`, ...said]
}

const shipped = (): string => readFileSync(UNIT, 'utf8')

t.test('systemd-analyze verify accepts the unit without a warning, and refuses broken copies', { skip: existsSync(SYSTEMD_ANALYZE) ? false : `${SYSTEMD_ANALYZE} is not installed (Debian: apt-get install systemd)` }, async (t) => {
  const unit = shipped()
  t.same(await verify(t, unit), [], 'no word from verify')

  const broken: Array<[string, string, string]> = [
    ['a misspelt hardening key', '\nProtectSystem=strict', '\nProtectSytem=strict'],
    ['a value systemd does not know', '\nRestart=on-failure', '\nRestart=sometimes'],
    ['a program that does not exist', '\nExecStart=/usr/bin/node ', '\nExecStart=/usr/bin/no-such-node '],
    ['a section that does not exist', '\n[Install]', '\n[Instal]'],
  ]
  for (const [what, from, to] of broken) {
    // Each at the start of a line: the comments mention some of these settings too.
    t.ok(unit.includes(from), `the unit has ${from.trim()}`)
    const said = await verify(t, unit.replace(from, to))
    t.not(said.length, 0, `${what}: ${said.join(' | ')}`)
  }
})

t.test('the settings the deployment relies on', async (t) => {
  const keys = parseUnit(shipped())
  const one = (key: string): string | undefined => keys.get(key)?.at(-1)
  t.equal(one('Service.User'), 'cod', 'its own user')
  t.equal(one('Service.StateDirectory'), 'cod', 'state in /var/lib/cod')
  t.equal(one('Service.ConfigurationDirectory'), 'cod', 'configuration in /etc/cod')
  t.equal(one('Service.ExecStart'), '/usr/bin/node --enable-source-maps /opt/cod/dist/cli/cod.js start --config /etc/cod/daemon.yaml')
  t.equal(one('Service.ExecReload'), '/bin/kill -HUP $MAINPID', 'reload is SIGHUP')
  t.equal(one('Service.Restart'), 'on-failure')
  for (const unit of ['freeswitch.service', 'network-online.target']) {
    t.ok(one('Unit.After')?.split(' ').includes(unit), `After=${unit}`)
    t.ok(one('Unit.Wants')?.split(' ').includes(unit), `Wants=${unit}`)
  }
  const hardening: Record<string, string> = {
    ProtectSystem: 'strict',
    ProtectHome: 'yes',
    NoNewPrivileges: 'yes',
    PrivateTmp: 'yes',
    PrivateDevices: 'yes',
    RestrictAddressFamilies: 'AF_INET AF_INET6 AF_UNIX',
    ProtectKernelTunables: 'yes',
    ProtectKernelModules: 'yes',
    ProtectKernelLogs: 'yes',
    LockPersonality: 'yes',
    RestrictRealtime: 'yes',
    SystemCallArchitectures: 'native',
    CapabilityBoundingSet: '',
  }
  for (const [key, value] of Object.entries(hardening)) t.equal(one(`Service.${key}`), value, `${key}=${value}`)
  t.equal(keys.get('Service.MemoryDenyWriteExecute'), undefined, 'no MemoryDenyWriteExecute: V8 writes the code it runs')
  // The graceful stop: CTI 2 s + cancelled calls 2 s + callbacks 10 s + closing the links (5 s
  // each at most by default): the unit waits longer before it kills.
  const stop = /^(\d+)s$/.exec(one('Service.TimeoutStopSec') ?? '')
  t.ok(stop !== null && Number(stop[1]) >= 20, `TimeoutStopSec above the graceful stop (${one('Service.TimeoutStopSec')})`)
})

t.test('deploy/systemd/daemon.yaml loads and keeps its journal in the StateDirectory', async (t) => {
  const dir = tempDir(t, 'systemd-conf')
  const file = join(dir, 'daemon.yaml')
  copyFileSync(EXAMPLE_CONFIG, file)
  cpSync(join(ROOT, 'conf/domains'), join(dir, 'domains'), { recursive: true })
  const loaded = await loadConfig(file)
  if (!loaded.ok) return t.fail(loaded.error.map((p) => `${p.path}: ${p.reason}`).join('\n'))
  const state = `/var/lib/${parseUnit(shipped()).get('Service.StateDirectory')?.at(-1) ?? '?'}/`
  const journal = journalDirOf(file, loaded.value.daemon.journal.dir)
  t.ok(journal.startsWith(state), `journal ${journal} under ${state}`)
  t.equal(loaded.value.daemon.freeswitch.mode, 'freeswitch')
})

t.test('systemd-analyze security: exposure at most 2.0 (1.4 when the unit was written)', { skip: existsSync(SYSTEMD_ANALYZE) ? false : `${SYSTEMD_ANALYZE} is not installed` }, async (t) => {
  const dir = tempDir(t, 'systemd-security')
  const file = join(dir, 'cod.service')
  copyFileSync(UNIT, file)
  const r = await run(SYSTEMD_ANALYZE, ['security', '--offline=yes', '--no-pager', file])
  const score = /Overall exposure level for cod\.service: (\d+\.\d+) (\w+)/.exec(r.stdout)
  if (score === null) return t.plan(0, `this systemd-analyze gives no offline score: ${r.stderr.trim().split('\n')[0] ?? ''}`)
  t.comment(`exposure ${score[1]} ${score[2]}`)
  t.ok(Number(score[1]) <= 2.0, `exposure ${score[1]} (${score[2]}) at most 2.0`)
})
