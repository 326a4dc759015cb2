/**
 * `cod ivr validate`: the daemon's own parser and messages (src/ivr/document/parse.ts): a valid
 * document passes; an unknown element, a GoTo to no Section, bad nesting are refused with line
 * and column; stdin with "-"; unreadable and non-UTF-8 files; usage mistakes.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { parseIvrDocument } from '../../src/ivr/document/index.js'
import { cod, codHere, tempDir } from './run-cod.js'

// Child processes on a loaded 2-core machine: generous, still bounded.
t.setTimeout(120_000)

const VALID = `<?xml version="1.0" encoding="UTF-8"?>
<IVR>
  <Answer/>
  <GoTo>menu</GoTo>
  <Section name="menu">
    <GetDigits numDigits="1" timeout="8" maxTries="3" validDigits="12">
      <Play>ivr/ivr-welcome.wav</Play>
    </GetDigits>
    <If expr="Digits == '1'"><Then><Transfer>sales</Transfer></Then></If>
    <Hangup/>
  </Section>
</IVR>
`

const UNKNOWN_ELEMENT = `<IVR>
  <Answer/>
  <Playy>welcome.wav</Playy>
</IVR>
`

const NO_SUCH_SECTION = `<IVR>
  <GoTo>nowhere</GoTo>
</IVR>
`

t.test('a valid document passes (exit 0)', async (t) => {
  const dir = tempDir(t, 'ivr')
  const file = join(dir, 'menu.xml')
  writeFileSync(file, VALID)
  t.ok(parseIvrDocument(VALID).ok, 'the daemon accepts it')
  const r = await codHere(['ivr', 'validate', file])
  t.equal(r.code, 0, r.stdout)
  t.equal(r.stdout, `${file}: ok\n`)
})

t.test('an unknown element is refused with line and column, the daemon\'s very message (exit 1)', async (t) => {
  const dir = tempDir(t, 'ivr')
  const file = join(dir, 'bad.xml')
  writeFileSync(file, UNKNOWN_ELEMENT)
  const daemon = parseIvrDocument(UNKNOWN_ELEMENT)
  t.notOk(daemon.ok)
  const r = await cod(['ivr', 'validate', file])
  t.equal(r.code, 1)
  t.match(r.stdout, /line 3, column 3 \(\/IVR\/Playy\[1\]\): unknown element <Playy>/)
  if (!daemon.ok) t.equal(r.stdout, `${file}: ${daemon.error.reason}\n`, 'the same message as the daemon')
})

t.test('stdin ("-"): a GoTo to no Section is refused; several files give one line each', async (t) => {
  const dir = tempDir(t, 'ivr')
  const good = join(dir, 'good.xml')
  writeFileSync(good, VALID)
  const r = await codHere(['ivr', 'validate', good, '-'], { stdin: NO_SUCH_SECTION })
  t.equal(r.code, 1, 'one refused document is enough for exit 1')
  const lines = r.stdout.trim().split('\n')
  t.equal(lines.length, 2)
  t.equal(lines[0], `${good}: ok`)
  t.match(lines[1], /^<stdin>: line 2, column 3 .*nowhere/)
  const xmlError = await codHere(['ivr', 'validate', '-'], { stdin: '<IVR><Answer></IVR>' })
  t.equal(xmlError.code, 1)
  t.match(xmlError.stdout, /^<stdin>: line 1, column \d+: /, 'malformed XML: line and column too')
})

t.test('unreadable, empty and non-UTF-8 documents are refused (exit 1)', async (t) => {
  const dir = tempDir(t, 'ivr')
  const latin1 = join(dir, 'latin1.xml')
  writeFileSync(latin1, Buffer.from('<IVR><Speak>caf\xe9</Speak></IVR>', 'latin1'))
  const [missing, notUtf8, empty] = await Promise.all([
    codHere(['ivr', 'validate', join(dir, 'missing.xml')]),
    codHere(['ivr', 'validate', latin1]),
    codHere(['ivr', 'validate', '-'], { stdin: '' }),
  ])
  t.equal(missing?.code, 1)
  t.match(missing?.stdout, /missing\.xml: cannot read: ENOENT/)
  t.equal(notUtf8?.code, 1)
  t.match(notUtf8?.stdout, /latin1\.xml: the document is not UTF-8 text/)
  t.equal(empty?.code, 1)
  t.match(empty?.stdout, /<stdin>: the document is empty/)
})

t.test('usage: no file, "-" twice, an unknown subcommand (exit 2)', async (t) => {
  const [none, twice, sub, bare] = await Promise.all([codHere(['ivr', 'validate']), codHere(['ivr', 'validate', '-', '-']), codHere(['ivr', 'check', 'x.xml']), codHere(['ivr'])])
  t.equal(none?.code, 2)
  t.match(none?.stderr, /a file \(or "-" for stdin\) is expected/)
  t.equal(twice?.code, 2)
  t.equal(sub?.code, 2)
  t.match(sub?.stderr, /unknown subcommand "ivr check"/)
  t.equal(bare?.code, 2)
})
