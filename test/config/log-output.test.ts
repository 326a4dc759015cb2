/**
 * `log.flush_ms`: how long the daemon's log lines may wait before they are written
 * (src/util/logger.ts says why they wait). The rule's bad cases, and the promise it makes: a
 * waiting line is written within flush_ms while the process runs, and every line is written
 * when the process exits.
 */
import { spawn } from 'node:child_process'
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { formatProblem, loadConfig } from '../../src/config/load.js'

async function shippedWithLog(t: Test, log: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'cod-config-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  await cp('conf/domains', join(dir, 'domains'), { recursive: true })
  const file = join(dir, 'daemon.yaml')
  const yaml = await readFile('conf/daemon.yaml', 'utf8')
  if (!/^log: .*$/m.test(yaml)) throw new Error('conf/daemon.yaml has no "log:" line to replace')
  await writeFile(file, yaml.replace(/^log: .*$/m, `log: ${log}`))
  return file
}

t.test('log.flush_ms defaults to 100 ms', async (t) => {
  const r = await loadConfig(await shippedWithLog(t, '{ level: info }'))
  if (!r.ok) return t.fail(r.error.map(formatProblem).join('\n'))
  t.equal(r.value.daemon.log.flush_ms, 100)
})

t.test('log.flush_ms: 0 (every line at once) and 10000 are accepted', async (t) => {
  for (const ms of [0, 10000]) {
    const r = await loadConfig(await shippedWithLog(t, `{ level: info, flush_ms: ${ms} }`))
    if (!r.ok) return t.fail(r.error.map(formatProblem).join('\n'))
    t.equal(r.value.daemon.log.flush_ms, ms)
  }
})

t.test('a bad log.flush_ms is refused, naming the key', async (t) => {
  for (const bad of ['-1', '1.5', '10001', 'fast', 'null']) {
    const file = await shippedWithLog(t, `{ level: info, flush_ms: ${bad} }`)
    const r = await loadConfig(file)
    if (r.ok) {
      t.fail(`flush_ms: ${bad} was accepted`)
      continue
    }
    t.same(
      r.error.map((p) => p.path),
      ['log.flush_ms'],
      `flush_ms: ${bad}: ${r.error.map(formatProblem).join('; ')}`,
    )
  }
})

/** Runs a Node process that logs through createStdoutLogger; resolves with each stdout line and when (ms after start) it arrived. */
function runLogger(script: string): Promise<Array<{ readonly line: string; readonly atMs: number }>> {
  const code = `import { createStdoutLogger } from ${JSON.stringify(new URL('../../src/util/logger.ts', import.meta.url).href)}\n${script}`
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { stdio: ['ignore', 'pipe', 'inherit'] })
  const lines: Array<{ line: string; atMs: number }> = []
  let start = 0
  let rest = ''
  child.stdout.setEncoding('utf8')
  child.stdout.on('data', (chunk: string) => {
    rest += chunk
    let nl: number
    while ((nl = rest.indexOf('\n')) >= 0) {
      const line = rest.slice(0, nl)
      rest = rest.slice(nl + 1)
      if (line === 'ready') start = Date.now()
      else lines.push({ line, atMs: Date.now() - start })
    }
  })
  return new Promise((resolve, reject) => {
    child.on('error', reject)
    child.on('close', () => resolve(lines))
  })
}

const messages = (lines: ReadonlyArray<{ line: string }>): string[] => lines.map((l) => (JSON.parse(l.line) as { msg: string }).msg)

t.test('a waiting line is written within flush_ms, long before the process ends', async (t) => {
  // The line is logged, then the process stays 3 s: the line must come after about 300 ms, not at exit.
  const lines = await runLogger(`
    const log = createStdoutLogger('info', { flushMs: 300 })
    process.stdout.write('ready\\n')
    log.info('first line')
    setTimeout(() => {}, 3000)
  `)
  t.same(messages(lines), ['first line'])
  // It waited for the flush (a line written at once comes within a few ms), and not for the exit.
  t.ok(lines[0]!.atMs >= 150 && lines[0]!.atMs < 2000, `written ${lines[0]!.atMs} ms after it was logged`)
})

t.test('lines still waiting when the process exits are written', async (t) => {
  // flush_ms far longer than the process lives: only the exit flush can write them.
  const lines = await runLogger(`
    const log = createStdoutLogger('info', { flushMs: 10000 })
    process.stdout.write('ready\\n')
    for (let i = 0; i < 50; i++) log.info('line ' + i)
    setTimeout(() => process.exit(0), 100)
  `)
  t.same(
    messages(lines),
    Array.from({ length: 50 }, (_, i) => `line ${i}`),
  )
})

t.test('flush_ms 0 writes each line at once', async (t) => {
  const lines = await runLogger(`
    const log = createStdoutLogger('info', { flushMs: 0 })
    process.stdout.write('ready\\n')
    log.info('at once')
    setTimeout(() => {}, 3000)
  `)
  t.same(messages(lines), ['at once'])
  t.ok(lines[0]!.atMs < 1000, `written ${lines[0]!.atMs} ms after it was logged`)
})
