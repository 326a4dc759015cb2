/**
 * FetchForm.parse splits the body in one pass and decodes a value only when it is read (issue 15,
 * src/xmlcurl/form.ts); before, URLSearchParams decoded every field. Both are run here on the
 * captured forms, on hostile and malformed bodies and on random ones, and must agree on every
 * field's value and on whether a field came twice with two values.
 */
import { readdirSync, readFileSync } from 'node:fs'
import t, { type Test } from 'tap'
import { FetchForm } from '../../src/xmlcurl/form.js'
import { ATTACKS } from './helpers.js'

const fixtureDir = new URL('./fixtures/', import.meta.url)

/** Names worth asking for: every name URLSearchParams saw, the raw pieces of the body, and a few absent ones. */
function namesOf(body: string): string[] {
  const names = new Set([...new URLSearchParams(body).keys()])
  for (const piece of body.split(/[&=]/)) names.add(piece)
  for (const extra of ['', 'section', 'absent', ' ', '+', '%', 'a b', 'a+b']) names.add(extra)
  return [...names]
}

function agree(t: Test, body: string, what: string): void {
  const scanned = FetchForm.parse(body)
  const reference = new FetchForm(new URLSearchParams(body))
  t.equal(scanned.hasConflicts, reference.hasConflicts, `${what}: conflicts`)
  const differing = namesOf(body).filter((n) => scanned.get(n) !== reference.get(n))
  t.same(differing.map((n) => [n, scanned.get(n), reference.get(n)]), [], `${what}: every field`)
}

t.test('the captured forms read the same as through URLSearchParams', async (t) => {
  const forms = readdirSync(fixtureDir).filter((f) => f.endsWith('.form'))
  t.ok(forms.length >= 5, `${forms.length} captured forms`)
  for (const f of forms) agree(t, readFileSync(new URL(f, fixtureDir), 'utf8'), f)
})

t.test('hostile and malformed bodies read the same as through URLSearchParams', async (t) => {
  const bodies = [
    '', '&', '&&&', '=', '==', 'a', 'a=', '=a', 'a==b', 'a=b=c', '&a=1&&b=2&', 'a=1&a=1', 'a=1&a=2', 'a=2&a=1&a=2',
    'a=%41&a=A', 'a=+&a=%20', 'a%20b=1&a+b=2', 'a%3Db=1', 'x=%', 'x=%4', 'x=%zz', 'x=%%41', 'x=100%', 'x=%C3%A9', 'x=%C3', 'x=%C3%28',
    'x=%E2%82', 'x=%F0%9F%98%80', 'x=%ED%A0%80', 'x=%C0%AF', 'x=%FF%FE', 'x=%EF%BB%BFbom', 'x=é&é=x', 'x=😀%F0%9F%98%80', 'x=a+b%2Bc',
    'x=%26y%3D1', 'section=directory&section=dialplan', 'section=directory&section=directory', 'x=%41&x=%42',
    ...ATTACKS.map((a) => `x=${encodeURIComponent(a)}&y=${a.replace(/&/g, '')}`),
  ]
  for (const body of bodies) agree(t, body, JSON.stringify(body))
})

t.test('random bodies read the same as through URLSearchParams', async (t) => {
  // Deterministic, so that a failure can be replayed.
  let seed = 15
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31)
  const pieces = ['a', 'b', 'ab', '=', '&', '+', '%', '%4', '%41', '%2B', '%26', '%3D', '%C3', '%A9', '%C3%A9', '%E2%82', '%F0%9F%98%80', '%FF', '%zz', 'é', '😀', ' ', '~']
  for (let i = 0; i < 1000; i++) {
    const body = Array.from({ length: next() % 16 }, () => pieces[next() % pieces.length]).join('')
    agree(t, body, `random ${i}: ${JSON.stringify(body)}`)
  }
})

t.test('a field sent twice: two spellings of one value agree, two values conflict', async (t) => {
  const same = FetchForm.parse('user=alice&user=%61lice&user=ali%63e')
  t.equal(same.hasConflicts, false)
  t.equal(same.get('user'), 'alice')
  const two = FetchForm.parse('user=alice&us%65r=mallory')
  t.equal(two.hasConflicts, true)
  t.equal(two.get('user'), undefined, 'neither value wins')
})

t.test('a body of many fields without values is read in one pass', async (t) => {
  // Each field is scanned for its `=` only up to its `&`: 128 kB of `a&` stays linear.
  const form = FetchForm.parse('a&'.repeat(64 * 1024))
  t.equal(form.get('a'), '')
  t.equal(form.hasConflicts, false)
})
