/**
 * `cod token hash`: prints the `sha256:` form api_tokens accepts, and the daemon's own
 * authentication (src/api/auth.ts) lets the token in against it; tokens the domain schema
 * would refuse in plain form are refused here too.
 */
import t from 'tap'
import { authenticate } from '../../src/api/auth.js'
import { domainSchema } from '../../src/config/schema.js'
import { Directory } from '../../src/directory/directory.js'
import { cod, codHere } from './run-cod.js'

// Child processes on a loaded 2-core machine: generous, still bounded.
t.setTimeout(120_000)

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`

t.test('the hash of the shipped demo token is the one conf/ ships; the daemon accepts the token against it', async (t) => {
  const r = await cod(['token', 'hash'], { stdin: 'hashed-demo-token-example\n' })
  t.equal(r.code, 0, r.stderr)
  t.equal(r.stdout, 'sha256:fd3b63e00575f4a673206d9c2a37f9099c5299a71c8c2e589e7f17e8c083c990\n', 'as in conf/domains/example.test.yaml')
  const token = 'a-fresh-token-with-~punctuation!'
  const fresh = await codHere(['token', 'hash'], { stdin: token })
  t.equal(fresh.code, 0)
  const hashed = fresh.stdout.trim()
  const domain = domainSchema.parse({ name: 'cli.test', api_tokens: [hashed], channel_limit: 1, gateway: 'pstn' })
  const directory = new Directory([domain])
  t.ok(authenticate(basic('cli.test', token), directory).ok, 'the token authenticates against its hash')
  t.notOk(authenticate(basic('cli.test', `${token}x`), directory).ok, 'another one does not')
})

t.test('tokens api_tokens would refuse are refused (exit 1), nothing on stdout', async (t) => {
  const cases: Array<[string, RegExp]> = [
    ['short-token', /16-256 printable ASCII .*\(it has 11\)/],
    ['', /\(it has 0\)/],
    ['has a space in the middle!', /without spaces/],
    ['x'.repeat(257), /16-256/],
    ['two-lines-token-1\nsecond-line-token-2', /one token, one line/],
    ['tökén-with-non-ascii-chars', /printable ASCII/],
    [`sha256:${'a'.repeat(64)}`, /already a "sha256:" digest/],
  ]
  const runs = await Promise.all(cases.map(([stdin]) => codHere(['token', 'hash'], { stdin })))
  runs.forEach((r, i) => {
    const [input, why] = cases[i] as [string, RegExp]
    t.equal(r.code, 1, JSON.stringify(input.slice(0, 30)))
    t.equal(r.stdout, '', 'nothing printed')
    t.match(r.stderr, why)
  })
})

t.test('usage: a missing or unknown subcommand, an argument (the token never goes on the command line)', async (t) => {
  const [bare, other, arg] = await Promise.all([codHere(['token']), codHere(['token', 'make']), cod(['token', 'hash', 'my-secret-token-123'])])
  t.equal(bare?.code, 2)
  t.equal(other?.code, 2)
  t.equal(arg?.code, 2)
  t.match(arg?.stderr, /Unexpected argument/i)
})
