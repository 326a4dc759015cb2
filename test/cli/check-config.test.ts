/**
 * `cod check-config`: the shipped configuration passes; a refused one prints every problem with
 * its file, key path and reason, the same problems the daemon's loader gives (src/config/load.ts),
 * and so does a journal folder the daemon could not create or write (src/config/state-dirs.ts).
 */
import { cpSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { loadConfig, formatProblem } from '../../src/config/load.js'
import { stateDirsOf } from '../../src/config/state-dirs.js'
import { readOnlyMountUnavailable, runWithReadOnlyFolder } from '../journal/read-only-mount.js'
import { cod, codHere, COD_ENTRY, ROOT, tempDir } from './run-cod.js'

/** A copy of the shipped conf/ (without its journal) in a temp folder. */
function copyOfShipped(t: Parameters<typeof tempDir>[0]): string {
  const dir = tempDir(t, 'check')
  cpSync(join(ROOT, 'conf/daemon.yaml'), join(dir, 'daemon.yaml'))
  cpSync(join(ROOT, 'conf/domains'), join(dir, 'domains'), { recursive: true })
  return dir
}

// Child processes on a loaded 2-core machine: generous, still bounded.
t.setTimeout(120_000)

t.test('the shipped conf/daemon.yaml and conf/sandbox.yaml pass (exit 0)', async (t) => {
  const r = await cod(['check-config', 'conf/daemon.yaml'])
  t.equal(r.code, 0, r.stderr)
  t.match(r.stdout, /conf\/daemon\.yaml: ok \(1 domain: example\.test\)/)
  t.equal(r.stderr, '', 'no warning')
  const sandbox = await codHere(['check-config', 'conf/sandbox.yaml'])
  t.equal(sandbox.code, 0, 'and so does the sandbox file (conf/sandbox.yaml)')
})

t.test('a bad domain file: each problem with file, key path and reason (exit 1), as the loader says', async (t) => {
  const dir = copyOfShipped(t)
  const domainFile = join(dir, 'domains/example.test.yaml')
  const text = readFileSync(domainFile, 'utf8')
  writeFileSync(domainFile, text.replace('channel_limit: 20', 'channel_limit: -1').replace('extension: "1002"', 'extension: "10x2"'))
  const r = await cod(['check-config', join(dir, 'daemon.yaml')])
  t.equal(r.code, 1)
  t.match(r.stdout, `${domainFile}: channel_limit: `)
  t.match(r.stdout, `${domainFile}: users[1].extension: must be 1-32 digits`)
  t.match(r.stderr, /2 problems: the daemon would refuse this configuration/)
  const loaded = await loadConfig(join(dir, 'daemon.yaml'))
  t.notOk(loaded.ok)
  if (!loaded.ok) t.same(r.stdout.trim().split('\n').length, loaded.error.length, 'one line per problem of the loader')
  if (!loaded.ok) t.ok(loaded.error.map(formatProblem).every((p) => r.stdout.includes(p.split(': ').pop() ?? '')), 'the loader\'s reasons')
})

t.test('cross-domain rules and unknown keys are refused as the daemon refuses them', async (t) => {
  const dir = copyOfShipped(t)
  const domainFile = join(dir, 'domains/example.test.yaml')
  writeFileSync(domainFile, readFileSync(domainFile, 'utf8').replace('members: [ bob, alice ]', 'members: [ bob, zoe ]'))
  writeFileSync(join(dir, 'daemon.yaml'), `${readFileSync(join(dir, 'daemon.yaml'), 'utf8')}\nsurprise: 1\n`)
  const r = await codHere(['check-config', join(dir, 'daemon.yaml')])
  t.equal(r.code, 1)
  // The daemon file is checked first: its problem stops the load before the domains, as at start.
  t.match(r.stdout, /daemon\.yaml: \(file\): Unrecognized key: "surprise"|daemon\.yaml: \(file\): .*surprise/)
  writeFileSync(join(dir, 'daemon.yaml'), readFileSync(join(ROOT, 'conf/daemon.yaml'), 'utf8'))
  const again = await codHere(['check-config', join(dir, 'daemon.yaml')])
  t.equal(again.code, 1)
  t.match(again.stdout, `${domainFile}: groups[1].members[1]: no user named "zoe" in this domain`)
})

t.test('unreadable files: a missing daemon file, broken YAML (exit 1)', async (t) => {
  const dir = tempDir(t, 'check')
  const missing = await codHere(['check-config', join(dir, 'nope.yaml')])
  t.equal(missing.code, 1)
  t.match(missing.stdout, /nope\.yaml: \(file\): cannot read: ENOENT/)
  writeFileSync(join(dir, 'daemon.yaml'), 'http: [unclosed\n')
  const broken = await codHere(['check-config', join(dir, 'daemon.yaml')])
  t.equal(broken.code, 1)
  t.match(broken.stdout, /daemon\.yaml: \(file\): YAML: /)
})

t.test('deprecated keys: accepted with a warning on stderr (exit 0)', async (t) => {
  const dir = copyOfShipped(t)
  const file = join(dir, 'daemon.yaml')
  writeFileSync(file, readFileSync(file, 'utf8').replace('give_up_after_ms: 86400000,', 'give_up_after_ms: 86400000, max_attempts: 5,'))
  const r = await codHere(['check-config', file])
  t.equal(r.code, 0, r.stdout)
  t.match(r.stderr, /warning: .*callbacks\.max_attempts: deprecated and ignored/)
})

t.test('usage: no file, two files (exit 2)', async (t) => {
  const none = await codHere(['check-config'])
  t.equal(none.code, 2)
  t.match(none.stderr, /one configuration file is expected/)
  t.equal((await codHere(['check-config', 'conf/daemon.yaml', 'conf/daemon.yaml'])).code, 2)
})

t.test('a journal folder that cannot be created: the folder and the reason (exit 1)', async (t) => {
  const dir = copyOfShipped(t)
  const file = join(dir, 'daemon.yaml')
  writeFileSync(join(dir, 'state'), 'a file where the journal\'s parent folder should be\n')
  const shipped = readFileSync(file, 'utf8')
  writeFileSync(file, `${shipped}journal: { dir: state/journal }\n`)
  const r = await cod(['check-config', file])
  t.equal(r.code, 1)
  // The recordings' default folder is beside the journal's: in the way of the same file.
  t.equal(
    r.stdout,
    `${file}: journal.dir: ${dir}/state/journal cannot be created: ${dir}/state is a file, not a folder (ENOTDIR)\n` +
      `${file}: recording.dir: ${dir}/state/recordings cannot be created: ${dir}/state is a file, not a folder (ENOTDIR)\n`,
  )
  t.match(r.stderr, /^2 problems: the daemon would not start with this configuration here/)
  // A journal switched off writes no folder: nothing to refuse (the recordings have a folder of their own).
  writeFileSync(file, `${shipped}journal: { dir: state/journal, enabled: false }\nrecording: { dir: recordings }\n`)
  t.equal((await codHere(['check-config', file])).code, 0)
  // recording.dir is refused exactly as journal.dir is.
  writeFileSync(file, `${shipped}recording: { dir: state/recordings }\n`)
  const refused = await cod(['check-config', file])
  t.equal(refused.code, 1)
  t.equal(refused.stdout, `${file}: recording.dir: ${dir}/state/recordings cannot be created: ${dir}/state is a file, not a folder (ENOTDIR)\n`)
})

t.test('the default journal folder beside a read-only daemon.yaml (a container\'s -v /srv/cod:/etc/cod:ro)', { skip: readOnlyMountUnavailable() }, async (t) => {
  const dir = copyOfShipped(t)
  const file = join(dir, 'daemon.yaml')
  const r = await runWithReadOnlyFolder(dir, [process.execPath, '--import', 'tsx', COD_ENTRY, 'check-config', file], ROOT)
  t.equal(r.code, 1, r.stderr)
  t.equal(
    r.stdout,
    `${file}: journal.dir: ${dir}/journal cannot be created: ${dir} is on a read-only file system (EROFS)\n` +
      `${file}: recording.dir: ${dir}/recordings cannot be created: ${dir} is on a read-only file system (EROFS)\n`,
  )
})

t.test('the container image\'s configuration, laid out as the Dockerfile lays it out in /etc/cod', async (t) => {
  const dir = tempDir(t, 'image')
  cpSync(join(ROOT, 'conf/image/daemon.yaml'), join(dir, 'daemon.yaml'))
  cpSync(join(ROOT, 'conf/domains'), join(dir, 'domains'), { recursive: true })
  const loaded = await loadConfig(join(dir, 'daemon.yaml'))
  if (!loaded.ok) return t.fail(loaded.error.map(formatProblem).join('\n'))
  const d = loaded.value.daemon
  t.equal(d.http.host, '0.0.0.0', 'the API listener on every address of the container: -p 8080:8080 reaches it')
  t.equal(d.xml_curl.host, '127.0.0.1', 'the xml_curl listener (every SIP password) stays on loopback')
  t.same(
    stateDirsOf(loaded.value),
    [
      { key: 'journal.dir', dir: '/var/lib/cod/journal' },
      { key: 'recording.dir', dir: '/var/lib/cod/recordings' },
    ],
    'state in the image\'s volume, not beside a read-only /etc/cod',
  )
})
