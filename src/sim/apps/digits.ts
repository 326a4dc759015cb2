/**
 * Digit collection (mod_dptools.c play_and_get_digits) and the simulated far end that presses
 * its configured digits: DTMF queued on the channel (switch_channel_queue_dtmf) and read one
 * digit at a time.
 */
import type { Switch } from '../core/switch.js'
import type { Session } from '../model/session.js'
import { separateString } from '../text/fs-strings.js'
import { PROMPT_SEC, wait } from './media.js'

/** Waits for one DTMF digit, up to `seconds`; undefined on timeout or hangup. */
export async function nextDigit(sw: Switch, s: Session, seconds: number, signal: AbortSignal): Promise<string | undefined> {
  if (s.dtmfBuffer === '') {
    await new Promise<void>((resolve) => {
      const timer = sw.clock.after(seconds, done)
      const onAbort = (): void => done()
      function done(): void {
        timer.cancel()
        s.dtmfWaiters.delete(done)
        signal.removeEventListener('abort', onAbort)
        resolve()
      }
      s.dtmfWaiters.add(done)
      signal.addEventListener('abort', onAbort, { once: true })
    })
  }
  if (s.dtmfBuffer === '' || !s.up) return undefined
  const d = s.dtmfBuffer[0] as string
  s.dtmfBuffer = s.dtmfBuffer.slice(1)
  return d
}

/** Far ends whose configured `dtmf` has been started (each sends its digits once per call). */
const dtmfStarted = new WeakSet<Session>()

/**
 * A terminal or PSTN number with `dtmf: "12#"` in its sim behaviour presses those digits once
 * the call is answered and a digit collection runs: one by one, 200 ms apart (scaled), as
 * RFC 2833 DTMF that FreeSWITCH queues on the channel (digits arriving between collections
 * wait in the queue for the next one, as switch_channel_queue_dtmf does).
 */
export function startFarEndDtmf(sw: Switch, s: Session): void {
  const digits = s.farEnd?.dtmf
  if (digits === undefined || dtmfStarted.has(s) || !s.answered) return
  dtmfStarted.add(s)
  const never = new AbortController().signal
  void (async () => {
    for (const d of digits) {
      await wait(sw, 0.2, never)
      if (!s.up) return
      sw.receiveDtmf(s, d)
    }
  })()
}

/**
 * play_and_get_digits <min> <max> <tries> <timeout ms> <terminators> <file> <invalid file>
 * <var> <regexp> [<digit timeout ms>]: prompts take PROMPT_SEC; digits come from DTMF received
 * (Simulator.sendDtmf). The result goes into <var> (empty when nothing valid was entered).
 */
export async function playAndGetDigits(sw: Switch, s: Session, arg: string, signal: AbortSignal): Promise<void> {
  startFarEndDtmf(sw, s)
  const a = separateString(arg, ' ')
  const min = parseInt(a[0] ?? '1', 10) || 1
  const max = parseInt(a[1] ?? '1', 10) || 1
  const tries = parseInt(a[2] ?? '1', 10) || 1
  const timeout = (parseInt(a[3] ?? '5000', 10) || 5000) / 1000
  const terminators = a[4] ?? '#'
  const varName = a[7] ?? 'digits'
  const re = new RegExp(a[8] ?? '\\d+')
  const digitTimeout = (parseInt(a[9] ?? '', 10) || timeout * 1000) / 1000
  for (let t = 0; t < tries && s.up; t++) {
    if (!(await wait(sw, PROMPT_SEC, signal)) && !s.up) return
    let digits = ''
    for (;;) {
      const d = await nextDigit(sw, s, digits === '' ? timeout : digitTimeout, signal)
      if (d === undefined) break
      if (terminators.includes(d)) break
      digits += d
      if (digits.length >= max) break
    }
    if (digits.length >= min && re.test(digits)) {
      s.setVar(varName, digits)
      return
    }
  }
  s.setVar(varName, undefined)
}
