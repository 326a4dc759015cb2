/**
 * The test suite's one `sleep` and one `waitFor`. A `waitFor` polls a condition and fails with
 * what it waited for when the deadline passes, so a broken rule fails instead of hanging; it is
 * how a test over real sockets or processes waits. A fixed `sleep` proves nothing by itself:
 * tests about time run on a fake clock (test/support/fake-clock.ts); `sleep` is for the
 * end-to-end suites that must let real time pass (a process's timer, a real socket's lag).
 */

/**
 * Lets pending promise callbacks and I/O callbacks run, `rounds` turns of the event loop
 * (setImmediate: real on a fake clock too). No time passes.
 */
export const flush = async (rounds = 5): Promise<void> => {
  for (let i = 0; i < rounds; i++) await new Promise((resolve) => setImmediate(resolve))
}

/** Real time passing: only for end-to-end suites over real processes and sockets. */
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Resolves once `cond` holds, checked every `everyMs`; rejects after `ms` naming `what`.
 * `cond` may be async (an HTTP probe).
 */
export async function waitFor(what: string, cond: () => boolean | Promise<boolean>, ms = 5000, everyMs = 10): Promise<void> {
  const deadline = Date.now() + ms
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`)
    await sleep(everyMs)
  }
}

/**
 * Resolves with the first value `probe` returns that is neither undefined nor false; rejects
 * after `ms` naming `what`.
 */
export async function waitForValue<T>(what: string, probe: () => T | undefined | false | Promise<T | undefined | false>, ms = 5000, everyMs = 10): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await probe()
    if (value !== undefined && value !== false) return value
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`)
    await sleep(everyMs)
  }
}
