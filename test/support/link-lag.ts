/**
 * The link tests' deadlines are in the daemon's responsive time (src/pbx/link-health.ts does not
 * count time the daemon itself was blocked). On a machine shared with other work, this measures
 * the time the test process (daemon and test alike) could not run, so that it can be set apart.
 */

/** Sums how late a 10 ms timer fires beyond 20 ms: time the event loop could not run. */
export function lagMeter(): { stop(): number } {
  let last = performance.now()
  let blocked = 0
  const timer = setInterval(() => {
    const now = performance.now()
    blocked += Math.max(0, now - last - 20)
    last = now
  }, 10)
  return {
    stop() {
      clearInterval(timer)
      return Math.round(blocked)
    },
  }
}
