/**
 * The one way a test starts the whole daemon inside the test's process: `startDaemon`, as operators run
 * it, with what every such test needs said once. Ports 0 (tests run side by side), a journal
 * folder of its own (the shipped configuration's sits in conf/), a start the configuration
 * refuses thrown with its problems, the daemon stopped and its folder removed at the test's end,
 * and the ESL link up before the test goes on (unless `waitLink: false`).
 *
 * The harnesses add what their suites need on top (test/e2e/harness.ts: a callback receiver;
 * test/faults/harness/in-process.ts: a fixture copy and captured logs). Tests that start the
 * daemon as a process of its own (test/faults/harness/stack.ts, test/recovery/, test/cluster/)
 * or that prove a start is refused call `startDaemon` themselves.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startDaemon, type Daemon, type DaemonOptions } from '../../src/daemon.js'
import { silentLogger } from '../../src/util/logger.js'
import { waitFor } from './wait.js'

export interface TestDaemonOptions extends Partial<DaemonOptions> {
  /** Wait for the ESL link before returning (default true). */
  readonly waitLink?: boolean
  /** How long the link may take (default 10 s). */
  readonly linkTimeoutMs?: number
}

/** What a test gives the daemon to stop at its end (tap's `t`). */
interface Teardown {
  teardown(fn: () => unknown): void
}

/**
 * Starts the daemon on `conf/daemon.yaml` (or `configFile`) with API and xml_curl ports 0, a
 * silent logger and a fresh journal folder unless told otherwise. With `t`, it is stopped (and
 * its folder removed) when the test ends; without, `stopTestDaemon` does that.
 */
export async function startTestDaemon(t: Teardown | undefined, opts: TestDaemonOptions = {}): Promise<Daemon> {
  const { waitLink = true, linkTimeoutMs = 10_000, ...given } = opts
  const ownJournal = given.journalDir === undefined ? mkdtempSync(join(tmpdir(), 'cod-test-journal-')) : undefined
  const started = await startDaemon({
    configFile: 'conf/daemon.yaml',
    logger: silentLogger(),
    httpPort: 0,
    ...given,
    ...(ownJournal !== undefined ? { journalDir: ownJournal } : {}),
  })
  if (!started.ok) {
    if (ownJournal !== undefined) rmSync(ownJournal, { recursive: true, force: true })
    throw new Error(`the daemon refused to start:\n${started.error.join('\n')}`)
  }
  const daemon = started.value
  if (ownJournal !== undefined) ownJournals.set(daemon, ownJournal)
  t?.teardown(() => stopTestDaemon(daemon))
  if (waitLink) {
    try {
      await waitFor('the ESL link', () => daemon.pbx.isConnected(), linkTimeoutMs)
    } catch (e) {
      if (t === undefined) await stopTestDaemon(daemon)
      throw e
    }
  }
  return daemon
}

const ownJournals = new WeakMap<Daemon, string>()

/** Stops a daemon startTestDaemon started, and removes the journal folder it made for it. */
export async function stopTestDaemon(daemon: Daemon): Promise<void> {
  await daemon.stop()
  const dir = ownJournals.get(daemon)
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
}
