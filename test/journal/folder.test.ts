/**
 * The journal's folder, when it cannot be used: the error names the folder and the real reason
 * (src/util/writable-folder.ts), not node's ENOENT from a recursive mkdir under a read-only
 * folder, which is what a container with a read-only /etc/cod used to log.
 */
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { openJournal } from '../../src/journal/index.js'
import { captureLogs, tempDir } from './helpers.js'
import { readOnlyMountUnavailable, runWithReadOnlyFolder } from './read-only-mount.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

t.test('a journal folder under a file: refused, naming the file in the way (ENOTDIR)', async (t) => {
  const dir = tempDir(t)
  writeFileSync(join(dir, 'state'), 'a file, not a folder\n')
  const r = await openJournal({ dir: join(dir, 'state/journal'), logger: captureLogs().logger })
  t.notOk(r.ok)
  if (!r.ok) t.equal(r.error, `journal folder ${join(dir, 'state/journal')}: cannot be created: ${join(dir, 'state')} is a file, not a folder (ENOTDIR)`)
})

t.test('a journal folder on a read-only file system', { skip: readOnlyMountUnavailable() }, async (t) => {
  // One child process: the folder is read-only in its mount namespace only.
  const dir = tempDir(t)
  mkdirSync(join(dir, 'existing'))
  const probe = `
    const { openJournal } = await import('./src/journal/index.ts')
    const { createLogger } = await import('./src/util/logger.ts')
    for (const sub of ['journal', 'deeper/journal', 'existing']) {
      const r = await openJournal({ dir: process.argv[1] + '/' + sub, logger: createLogger('fatal') })
      console.log(r.ok ? 'opened' : r.error)
    }`
  const r = await runWithReadOnlyFolder(dir, [process.execPath, '--import', 'tsx', '--input-type=module', '-e', probe, dir], ROOT)
  t.equal(r.code, 0, r.stderr)
  t.same(r.stdout.trim().split('\n'), [
    `journal folder ${dir}/journal: cannot be created: ${dir} is on a read-only file system (EROFS)`,
    `journal folder ${dir}/deeper/journal: cannot be created: ${dir} is on a read-only file system (EROFS)`,
    `journal folder ${dir}/existing: cannot be written: ${dir}/existing is on a read-only file system (EROFS)`,
  ])
})

t.test('as an unprivileged user (a container\'s uid 1000): a read-only mount is still named, not just EACCES', { skip: readOnlyMountUnavailable() }, async (t) => {
  // access(2) answers EACCES when the mode bits refuse as well, as on a root-owned /etc/cod
  // mounted read-only: the mount is the reason to give, since no chown fixes it.
  const base = tempDir(t)
  chmodSync(base, 0o755)
  mkdirSync(join(base, 'ro'), { mode: 0o755 })
  mkdirSync(join(base, 'plain'), { mode: 0o755 })
  const probe = `
    const { openJournal } = await import('./src/journal/index.ts')
    const { createLogger } = await import('./src/util/logger.ts')
    for (const sub of ['ro/journal', 'plain/journal']) {
      const r = await openJournal({ dir: process.argv[1] + '/' + sub, logger: createLogger('fatal') })
      console.log(r.ok ? 'opened' : r.error)
    }`
  const asNode = ['setpriv', '--reuid=1000', '--regid=1000', '--clear-groups', '--']
  const r = await runWithReadOnlyFolder(join(base, 'ro'), [...asNode, process.execPath, '--import', 'tsx', '--input-type=module', '-e', probe, base], ROOT)
  t.equal(r.code, 0, r.stderr)
  t.same(r.stdout.trim().split('\n'), [
    `journal folder ${base}/ro/journal: cannot be created: ${base}/ro is on a read-only file system (EROFS)`,
    `journal folder ${base}/plain/journal: cannot be created: ${base}/plain is not writable by uid 1000 (EACCES)`,
  ])
})
