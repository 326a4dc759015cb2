/**
 * `freeswitch.mode` has no default: a daemon file without it is refused at load, naming the file,
 * the key and the two allowed values, so that a deployment meant for a real FreeSWITCH cannot
 * start the simulator by omission.
 */
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { formatProblem, loadConfig } from '../../src/config/load.js'

/** The shipped configuration in a temporary folder, its daemon.yaml passed through `edit`. */
async function shippedWith(t: Test, edit: (yaml: string) => string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'cod-config-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  await cp('conf/domains', join(dir, 'domains'), { recursive: true })
  const file = join(dir, 'daemon.yaml')
  await writeFile(file, edit(await readFile('conf/daemon.yaml', 'utf8')))
  return file
}

const withoutMode = (yaml: string): string => {
  const out = yaml.replace(/^ {2}mode: simulator.*\n/m, '')
  if (out === yaml) throw new Error('conf/daemon.yaml has no "  mode: simulator" line to remove')
  return out
}

t.test('the shipped configuration says mode: simulator', async (t) => {
  const r = await loadConfig('conf/daemon.yaml')
  if (!r.ok) return t.fail(r.error.map(formatProblem).join('\n'))
  t.equal(r.value.daemon.freeswitch.mode, 'simulator')
})

t.test('a daemon file without freeswitch.mode is refused with the file, the key and the allowed values', async (t) => {
  const file = await shippedWith(t, withoutMode)
  const r = await loadConfig(file)
  if (r.ok) return t.fail('loaded without freeswitch.mode')
  t.equal(r.error.length, 1)
  const message = formatProblem(r.error[0]!)
  t.ok(message.startsWith(`${file}: freeswitch.mode: `), message)
  t.match(message, /required/)
  t.match(message, /"simulator"/)
  t.match(message, /"freeswitch"/)
})

t.test('a daemon file without a freeswitch section is refused the same way', async (t) => {
  const file = await shippedWith(t, (yaml) => {
    const out = yaml.replace(/^freeswitch:\n(?: {2}.*\n)+/m, '')
    if (out === yaml) throw new Error('conf/daemon.yaml has no freeswitch block to remove')
    return out
  })
  const r = await loadConfig(file)
  if (r.ok) return t.fail('loaded without a freeswitch section')
  t.same(
    r.error.map((p) => [p.file, p.path]),
    [[file, 'freeswitch.mode']],
  )
  t.match(r.error[0]?.reason, /required.*"simulator".*"freeswitch"/)
})

t.test('an unknown mode is refused with the allowed values', async (t) => {
  const file = await shippedWith(t, (yaml) => yaml.replace(/^ {2}mode: simulator/m, '  mode: simulated'))
  const r = await loadConfig(file)
  if (r.ok) return t.fail('loaded with mode: simulated')
  t.equal(formatProblem(r.error[0]!), `${file}: freeswitch.mode: must be "simulator" or "freeswitch"`)
})
