/**
 * FreeSWITCH's sessions-per-second ceiling (v1.10.12), as the simulator enforces it:
 *
 * - `sessions-per-second` (switch.conf.xml; vanilla 30) is the budget of one second. A timer
 *   refills the counter once a second (switch_time.c: `runtime.sps = runtime.sps_total`); each
 *   new session, inbound or outbound, takes one (switch_core_session.c
 *   switch_core_session_request_uuid: `sps = --runtime.sps; if (sps <= 0)` refuses it, logging
 *   `Throttle Error! <session count>`). So only sps - 1 sessions are created in a second, and a
 *   refused request still takes from the counter.
 * - An originate whose session is refused fails `-ERR DESTINATION_OUT_OF_ORDER` with no channel
 *   event (mod_sofia.c "Error Creating Session"); 4 of 8 went through over `fsctl sps 5`
 *   (test/fixtures/freeswitch/esl/35-sessions-per-second.txt).
 * - `fsctl sps [N]` sets the rate when N > 0 and answers the rate in force either way
 *   (mod_commands.c ctl_function, switch_core.c SCSC_SPS).
 *
 * FreeSWITCH's second is the simulator's: `timeScale` real seconds. The counter is refilled
 * lazily, when a session is asked for in a later second than the last one, rather than by a
 * timer: the same counts, and nothing runs while the switch is idle.
 */
const VANILLA_SESSIONS_PER_SECOND = 30

export class SessionRate {
  /** sessions-per-second in force (`runtime.sps_total`). */
  #total: number
  /** What is left of this second's budget (`runtime.sps`): may go below 0, as FreeSWITCH's does. */
  #left: number
  /** The second (of the simulated clock) the budget belongs to. */
  #second: number
  /** Sessions asked for in the last full second (`sps_last`), for `status`. */
  #last = 0
  #peak = 0
  /** FreeSWITCH's seconds count from its timer's start: here, from the switch's. */
  readonly #start: number

  constructor(
    /** Real milliseconds per simulated second. */
    private readonly secondMs: number,
    total = VANILLA_SESSIONS_PER_SECOND,
    private readonly now: () => number = Date.now,
  ) {
    this.#total = total
    this.#left = total
    this.#start = now()
    this.#second = 0
  }

  #secondOf(t: number): number {
    return Math.floor((t - this.#start) / this.secondMs)
  }

  #refill(): void {
    const second = this.#secondOf(this.now())
    if (second === this.#second) return
    // The second that ended is "last" only if it was the one just before; an idle gap counts 0.
    this.#last = second === this.#second + 1 ? this.#total - this.#left : 0
    this.#peak = Math.max(this.#peak, this.#last)
    this.#second = second
    this.#left = this.#total
  }

  /** A new session is asked for: false when FreeSWITCH would refuse it ("Throttle Error!"). */
  request(): boolean {
    this.#refill()
    this.#left -= 1
    return this.#left > 0
  }

  /** `fsctl sps [N]`: sets the rate when N > 0 (from the next refill on, as FreeSWITCH); the rate in force. */
  control(n: number): number {
    if (n > 0) this.#total = n
    return this.#total
  }

  /** For `status`: sessions asked for in the last second, the rate, the peak. */
  stats(): { readonly last: number; readonly total: number; readonly peak: number } {
    this.#refill()
    return { last: this.#last, total: this.#total, peak: this.#peak }
  }
}
