/**
 * Dialplan applications the simulator runs (mod_dptools.c names and argument forms). Media
 * applications take simulated time (PROMPT_SEC per prompt, scaled) and end early on hangup;
 * every run is recorded (Simulator.executedApps). Applications not listed here make FreeSWITCH
 * hang the channel up with DESTINATION_OUT_OF_ORDER ("Invalid Application").
 */
import { bridgeApp } from './bridge-app.js'
import { str2cause } from './causes.js'
import { PROMPT_SEC, untilAborted, type SwitchCore } from './core.js'
import { separateString } from './fs-strings.js'
import type { Session } from './session.js'

export type AppImpl = (core: SwitchCore, s: Session, arg: string, signal: AbortSignal) => Promise<void> | void

/** `name=value` (mod_dptools.c set_function): no `=` or an empty value unsets. */
function splitAssignment(arg: string): [string, string] | undefined {
  const eq = arg.indexOf('=')
  const name = (eq < 0 ? arg : arg.slice(0, eq)).trim()
  if (name === '') return undefined
  return [name, eq < 0 ? '' : arg.slice(eq + 1)]
}

/**
 * `export [nolocal:]name=value` (mod_dptools.c export_function → switch_channel_export_variable_var_check):
 * the value is stored on the channel under the name as written (so `nolocal:X` is its own
 * variable and the calling channel's `X` is untouched), and that name is appended to
 * `export_vars`; switch_channel_process_export strips `nolocal:` when it copies the value to
 * the new legs.
 */
function exportVar(s: Session, arg: string): void {
  const kv = splitAssignment(arg)
  if (kv === undefined) return
  const [written, value] = kv
  s.setVar(written, value)
  const list = (s.getVar('export_vars') ?? '').split(',').filter((x) => x !== '')
  if (!list.includes(written)) list.push(written)
  s.setVar('export_vars', list.join(','))
}

/** Waits for `seconds` of simulated time; false when the channel hung up or the app was interrupted. */
const wait = (core: SwitchCore, seconds: number, signal: AbortSignal): Promise<boolean> => core.clock.sleep(seconds, signal)

/** Waits for one DTMF digit, up to `seconds`; undefined on timeout or hangup. */
async function nextDigit(core: SwitchCore, s: Session, seconds: number, signal: AbortSignal): Promise<string | undefined> {
  if (s.dtmfBuffer === '') {
    await new Promise<void>((resolve) => {
      const timer = core.clock.after(seconds, done)
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
function startFarEndDtmf(core: SwitchCore, s: Session): void {
  const digits = s.farEnd?.dtmf
  if (digits === undefined || dtmfStarted.has(s) || !s.answered) return
  dtmfStarted.add(s)
  const never = new AbortController().signal
  void (async () => {
    for (const d of digits) {
      await wait(core, 0.2, never)
      if (!s.up) return
      core.receiveDtmf(s, d)
    }
  })()
}

/**
 * play_and_get_digits <min> <max> <tries> <timeout ms> <terminators> <file> <invalid file>
 * <var> <regexp> [<digit timeout ms>]: prompts take PROMPT_SEC; digits come from DTMF received
 * (Simulator.sendDtmf). The result goes into <var> (empty when nothing valid was entered).
 */
async function playAndGetDigits(core: SwitchCore, s: Session, arg: string, signal: AbortSignal): Promise<void> {
  startFarEndDtmf(core, s)
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
    if (!(await wait(core, PROMPT_SEC, signal)) && !s.up) return
    let digits = ''
    for (;;) {
      const d = await nextDigit(core, s, digits === '' ? timeout : digitTimeout, signal)
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

export const APPS: Readonly<Record<string, AppImpl>> = {
  answer: (core, s) => core.answer(s),
  pre_answer: (core, s) => core.preAnswer(s),
  ring_ready: (core, s) => core.progress(s),
  park: (core, s, _arg, signal) => core.park(s, signal),
  hangup: (core, s, arg) => core.hangup(s, str2cause(arg.trim())),
  bridge: (core, s, arg, signal) => bridgeApp(core, s, arg, signal),
  transfer: (core, s, arg) => {
    const [dest, dp, ctx] = separateString(arg, ' ')
    if (dest !== undefined && dest !== '') core.transfer(s, dest, dp, ctx)
  },
  set: (_core, s, arg) => {
    const kv = splitAssignment(arg)
    if (kv !== undefined) s.setVar(kv[0], kv[1])
  },
  export: (_core, s, arg) => exportVar(s, arg),
  unset: (_core, s, arg) => s.setVar(arg.trim(), undefined),
  multiset: (_core, s, arg) => {
    for (const item of separateString(arg, ' ')) {
      const kv = splitAssignment(item)
      if (kv !== undefined) s.setVar(kv[0], kv[1])
    }
  },
  log: () => undefined,
  info: () => undefined,
  event: () => undefined,
  set_zombie_exec: () => undefined,
  sleep: async (core, _s, arg, signal) => {
    await wait(core, (parseInt(arg, 10) || 0) / 1000, signal)
  },
  playback: async (core, _s, _arg, signal) => {
    await wait(core, PROMPT_SEC, signal)
  },
  speak: async (core, _s, _arg, signal) => {
    await wait(core, PROMPT_SEC, signal)
  },
  gentones: async (core, _s, _arg, signal) => {
    await wait(core, PROMPT_SEC, signal)
  },
  endless_playback: (_core, _s, _arg, signal) => untilAborted(signal),
  echo: (_core, _s, _arg, signal) => untilAborted(signal),
  play_and_get_digits: playAndGetDigits,
  /** sched_hangup [+]<seconds> [cause]: `+` is relative, else an epoch time. */
  sched_hangup: (core, s, arg) => {
    const [when, cause] = separateString(arg, ' ')
    if (when === undefined || when === '') return
    const seconds = when.startsWith('+') ? parseInt(when.slice(1), 10) : parseInt(when, 10) - Math.floor(Date.now() / 1000)
    if (!Number.isFinite(seconds)) return
    s.scheduled.push(core.clock.after(Math.max(0, seconds), () => core.hangup(s, str2cause(cause))))
  },
}
