/**
 * Only the link writes ESL text (docs/architecture.md "Who owns what"; the check is
 * esl-writers.ts): no module of src/ outside the allowed ones starts an Event Socket command
 * line, casts to the command brands or opens or writes a socket; and the check itself catches
 * each of these in a module that may not, while prose that starts with a verb passes.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { ALLOWED, findEslWriting } from './esl-writers.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

function* modulesOf(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) yield* modulesOf(path)
    else if (name.endsWith('.ts')) yield relative(ROOT, path)
  }
}

t.test('src/: only the link writes ESL text, and only pbx/commands.ts makes commands', async (t) => {
  const files = [...modulesOf(join(ROOT, 'src'))].filter((f) => !f.startsWith('src/sim/'))
  t.ok(files.length > 100, `${files.length} modules read`)
  t.same(
    files.flatMap((f) => findEslWriting(f, readFileSync(join(ROOT, f), 'utf8'))),
    [],
  )
  // The allowed modules do what they are allowed for (else the list is stale).
  const allowedFindings = (f: string) => findEslWriting(`elsewhere/${f}`, readFileSync(join(ROOT, f), 'utf8')).map((x) => x.kind)
  t.ok(allowedFindings('src/pbx/esl-session.ts').includes('protocol-line'), 'esl-session.ts writes auth')
  t.ok(allowedFindings('src/pbx/esl-session.ts').includes('socket'), 'esl-session.ts opens the socket')
  t.ok(allowedFindings('src/pbx/connection.ts').includes('protocol-line'), 'connection.ts frames commands')
  t.ok(allowedFindings('src/pbx/event-filter.ts').includes('protocol-line'), 'event-filter.ts writes filters')
  t.ok(allowedFindings('src/pbx/commands.ts').includes('brand-cast'), 'commands.ts makes commands')
})

t.test('the check catches each kind of ESL writing outside the link, and lets prose pass', async (t) => {
  const kinds = (file: string, source: string) => findEslWriting(file, source).map((f) => f.kind)
  const elsewhere = 'src/origination/sneaky.ts'
  const bad: Array<[string, string]> = [
    ["const c = `bgapi originate ${dial} &park()`", 'protocol-line'],
    ["const c = 'api uuid_kill 1234'", 'protocol-line'],
    ['const c = `api ${command}`', 'protocol-line'],
    ["const c = 'event plain ALL'", 'protocol-line'],
    ["const c = 'filter Unique-ID 1234'", 'protocol-line'],
    ['const c = `sendmsg ${uuid}\\ncall-command: hangup`', 'protocol-line'],
    ["const c = 'auth ClueCon'", 'protocol-line'],
    // A line smuggled after the first, in the middle of a template.
    ['const c = `x ${a}\\n\\nbgapi originate ${b}`', 'protocol-line'],
    ["const c = 'uuid_kill 1234' as EslCommand", 'brand-cast'],
    ['const a = <EslApp>{ app: "system", arg: "id" }', 'brand-cast'],
    ["import net from 'node:net'", 'socket'],
    ["import { connect } from 'node:net'", 'socket'],
    ["import { createConnection as c } from 'net'", 'socket'],
    ["import * as tls from 'node:tls'", 'socket'],
  ]
  for (const [source, kind] of bad) t.same(kinds(elsewhere, source), [kind], source)
  t.same(kinds('src/pbx/replies.ts', 'socket.write(bytes)'), ['socket'], 'a write in src/pbx outside esl-session.ts')
  for (const [source, kind] of bad) {
    const owner = ALLOWED[kind as keyof typeof ALLOWED][0] as string
    t.same(kinds(owner, source), [], `allowed in ${owner}: ${source}`)
  }
  const prose = [
    "log.warn('auth throttle: client blocked after repeated failed authentications')",
    "parts.then('api listener', start)",
    "log.error('event listener failed')",
    "const m = 'log lines dropped: stdout took nothing for a while'",
    "const c = 'uuid_kill 1234'",
    "import { isIP } from 'node:net'",
    "import type { Socket } from 'node:net'",
    'stream.write(line)',
  ]
  for (const source of prose) t.same(kinds(elsewhere, source), [], `not ESL: ${source}`)
})
