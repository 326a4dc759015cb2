/**
 * Starting and stopping the parts of a program in one written order (the daemon's: src/daemon.ts).
 *
 * Each part is started from what the parts before it offered and returns what it offers the parts
 * after it, and how to stop it. The list is written once: the parts start in its order and stop in
 * the reverse, so a part is stopped before anything it was made from. A part that fails to start
 * (an error value, or a throw) stops the parts already started, in reverse, before the failure is
 * returned (or thrown again): a start that fails half-way leaves nothing listening or locked.
 *
 * No framework: `Parts` only keeps the list and the types of what the parts offered so far, so a
 * part cannot name something a later part offers (it is not in the type of its argument).
 */
import type { Logger } from './logger.js'
import { err, ok, type Result } from './result.js'

/** What a started part gives: what it offers the parts after it, and how to undo its start. */
export interface Running<Offers extends object> {
  readonly offers: Offers
  /** Called once, when the parts stop (in the reverse of the start order); none: nothing to undo. */
  readonly stop?: () => void | Promise<void>
}

/** How a part starts: from what the parts before it offer; problems as values (said to the operator). */
export type PartStart<Made extends object, Offers extends object> = (made: Made) => Result<Running<Offers>, string[]> | Promise<Result<Running<Offers>, string[]>>

/** The parts, started: everything they offered, and their stop (in reverse; once, whoever calls it). */
export interface StartedParts<Made extends object> {
  readonly made: Made
  stop(): Promise<void>
}

interface Step {
  readonly name: string
  readonly start: PartStart<Record<string, unknown>, Record<string, unknown>>
}

interface Stoppable {
  readonly name: string
  readonly stop: () => void | Promise<void>
}

/** The ordered list of parts; `then` adds one after the others, `start` starts them all. */
export class Parts<Made extends object> {
  private constructor(private readonly steps: readonly Step[]) {}

  static list(): Parts<object> {
    return new Parts([])
  }

  /** Adds a part, started after every part before it, from what they offer. */
  then<Offers extends object>(name: string, start: PartStart<Made, Offers>): Parts<Made & Offers> {
    return new Parts<Made & Offers>([...this.steps, { name, start: start as unknown as Step['start'] }])
  }

  /**
   * Starts the parts in order. On a part's failure the ones started are stopped in reverse and
   * its problems returned (a part names itself in them); a part that throws is handled the same
   * and its error thrown again once they are stopped.
   */
  async start(logger: Logger): Promise<Result<StartedParts<Made>, string[]>> {
    const made: Record<string, unknown> = {}
    const running: Stoppable[] = []
    for (const step of this.steps) {
      let started: Result<Running<Record<string, unknown>>, string[]>
      const t0 = performance.now()
      try {
        started = await step.start(made)
        // Two parts offering one name would silently hide the first: a mistake in the list.
        const again = started.ok ? Object.keys(started.value.offers).find((key) => key in made) : undefined
        if (again !== undefined) {
          if (started.ok && started.value.stop !== undefined) running.push({ name: step.name, stop: started.value.stop })
          throw new Error(`part ${step.name} offers ${again}, already offered by an earlier part`)
        }
      } catch (e) {
        logger.error({ part: step.name, err: e }, 'part failed to start; stopping the parts started')
        await stopInReverse(running, logger).catch(() => undefined)
        throw e
      }
      if (!started.ok) {
        logger.debug({ part: step.name }, 'part refused to start; stopping the parts started')
        const stopped = await stopInReverse(running, logger).then(
          () => [],
          (e: unknown) => [`while stopping the parts started: ${(e as Error).message}`],
        )
        return err([...started.error, ...stopped])
      }
      Object.assign(made, started.value.offers)
      if (started.value.stop !== undefined) running.push({ name: step.name, stop: started.value.stop })
      // How long each part took: where a slow start goes (a big journal, a slow disk, the switch).
      logger.debug({ part: step.name, ms: Math.round(performance.now() - t0) }, 'part started')
    }
    let stopping: Promise<void> | undefined
    return ok({ made: made as Made, stop: () => (stopping ??= stopInReverse(running, logger)) })
  }
}

/**
 * Stops the parts, last started first. A part whose stop fails does not keep the others running:
 * they are stopped all the same, and the first failure is thrown at the end.
 */
async function stopInReverse(running: readonly Stoppable[], logger: Logger): Promise<void> {
  let firstFailure: { error: unknown } | undefined
  for (const part of [...running].reverse()) {
    try {
      await part.stop()
      logger.debug({ part: part.name }, 'part stopped')
    } catch (e) {
      logger.error({ part: part.name, err: e }, 'part failed to stop')
      firstFailure ??= { error: e }
    }
  }
  if (firstFailure !== undefined) throw firstFailure.error
}

/**
 * A function a part offers to a part made *before* it, where the two need each other (each use
 * says why): it answers as `before` until the later part binds the real one. The only way a
 * part reaches one made after it, and so named at each use.
 */
export interface ForwardPort<Args extends unknown[], R> {
  readonly call: (...args: Args) => R
  bind(real: (...args: Args) => R): void
}

export function forwardPort<Args extends unknown[], R>(before: (...args: Args) => R): ForwardPort<Args, R> {
  let current = before
  return {
    call: (...args) => current(...args),
    bind(real) {
      current = real
    },
  }
}
