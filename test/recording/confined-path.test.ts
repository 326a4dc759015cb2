/**
 * The one confinement function of file names (src/util/confined-path.ts): hostile segments are
 * refused by the alphabet, and a symbolic link below the root, to outside or dangling, is refused.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { confinedPath } from '../../src/util/confined-path.js'

const HOSTILE = ['..', '.', '', '../x', '..%2fx', '%2e%2e', '%2E%2E%2F', 'a/b', 'a\\b', 'x\0y', '\0', 'x'.repeat(1000), 'ünïcødé', '．．', '\u2024\u2024', 'a b', '~', '$HOME', 'C:', '/etc/passwd']

const tempRoot = (t: Test): string => {
  const dir = mkdtempSync(join(tmpdir(), 'cod-confined-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

t.test('plain names are joined under the root', async (t) => {
  const root = tempRoot(t)
  t.same(confinedPath(root, 'example.test', '0f6c-x.wav'), { ok: true, value: join(root, 'example.test', '0f6c-x.wav') })
  t.equal(confinedPath(root).ok, false, 'no segment: no file')
})

t.test('every hostile segment is refused, in any position', async (t) => {
  const root = tempRoot(t)
  for (const segment of HOSTILE) {
    t.equal(confinedPath(root, segment).ok, false, `${JSON.stringify(segment.slice(0, 20))} alone`)
    t.equal(confinedPath(root, 'example.test', segment).ok, false, `${JSON.stringify(segment.slice(0, 20))} last`)
    t.equal(confinedPath(root, segment, 'a.wav').ok, false, `${JSON.stringify(segment.slice(0, 20))} first`)
  }
})

t.test('a symbolic link below the root is refused: to outside, to inside, dangling', async (t) => {
  const root = tempRoot(t)
  const outside = tempRoot(t)
  writeFileSync(join(outside, 'secret.wav'), 'secret')
  mkdirSync(join(root, 'example.test'))
  symlinkSync(outside, join(root, 'evil.test'))
  symlinkSync(join(outside, 'secret.wav'), join(root, 'example.test', 'a.wav'))
  symlinkSync(join(outside, 'not-yet.wav'), join(root, 'example.test', 'dangling.wav'))
  symlinkSync(join(root, 'example.test'), join(root, 'inside.test'))
  t.match(confinedPath(root, 'evil.test', 'secret.wav'), { ok: false, error: /symbolic link/ }, 'a folder that is a link out')
  t.match(confinedPath(root, 'example.test', 'a.wav'), { ok: false, error: /symbolic link/ }, 'a file that is a link out')
  t.match(confinedPath(root, 'example.test', 'dangling.wav'), { ok: false, error: /symbolic link/ }, 'a dangling link (a write would create its target)')
  t.match(confinedPath(root, 'inside.test', 'b.wav'), { ok: false, error: /symbolic link/ }, 'even a link that stays inside')
  t.equal(confinedPath(root, 'example.test', 'b.wav').ok, true, 'a missing file in a real folder is fine')
})

t.test('the root itself may be a link (the operator chose it)', async (t) => {
  const real = tempRoot(t)
  const holder = tempRoot(t)
  symlinkSync(real, join(holder, 'recordings'))
  t.same(confinedPath(join(holder, 'recordings'), 'example.test', 'a.wav'), { ok: true, value: join(holder, 'recordings', 'example.test', 'a.wav') })
})
