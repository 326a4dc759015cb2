/**
 * The domain's live channels against its channel_limit over the last hour, for the live calls
 * page's chart (docs/ui.md "Channels over the last hour"): every `intervalMs` (10 s) the model's
 * live count of each configured domain is written, with the limit in force then, into a ring per
 * domain that holds one window (an hour: 360 samples). Memory is bounded by the configured
 * domains; a domain removed by a reload loses its ring at the next sample.
 *
 * Time comes from the injected clock (the tick) and the epoch clock (the sample's date), so a test
 * moves both with a fake clock.
 */
import type { Clock, CancelTimer } from '../util/clock.js'
import { Ring } from '../util/ring.js'

export interface ChannelSample {
  /** Epoch ms. */
  readonly at: number
  /** Channels of the domain not hung up (what the channel limit counts). */
  readonly live: number
  /** The domain's channel_limit then. */
  readonly limit: number
}

export interface ChannelSamples {
  readonly intervalMs: number
  /** The domain's samples, oldest first (at most one window's). */
  of(domain: string): ChannelSample[]
  /** Takes a sample of every domain now (the timer calls it; a test may too). */
  sample(): void
  stop(): void
}

export interface ChannelSamplesDeps {
  readonly channels: { liveCount(domain: string): number }
  /** The configured domains and their limits, read at each sample (a reload shows at the next). */
  readonly domains: () => Iterable<{ readonly name: string; readonly channelLimit: number }>
  readonly clock: Clock
  /** Epoch ms of a sample. */
  readonly now: () => number
  /** Default 10 s. */
  readonly intervalMs?: number
  /** How far back samples are kept. Default one hour. */
  readonly windowMs?: number
}

const DEFAULT_INTERVAL_MS = 10_000
const DEFAULT_WINDOW_MS = 3_600_000

export function createChannelSamples(deps: ChannelSamplesDeps): ChannelSamples {
  const intervalMs = deps.intervalMs ?? DEFAULT_INTERVAL_MS
  const capacity = Math.max(1, Math.ceil((deps.windowMs ?? DEFAULT_WINDOW_MS) / intervalMs))
  const rings = new Map<string, Ring<ChannelSample>>()

  const sample = (): void => {
    const at = deps.now()
    const seen = new Set<string>()
    for (const d of deps.domains()) {
      const name = d.name.toLowerCase()
      seen.add(name)
      let ring = rings.get(name)
      if (ring === undefined) {
        ring = new Ring(capacity)
        rings.set(name, ring)
      }
      ring.push({ at, live: deps.channels.liveCount(name), limit: d.channelLimit })
    }
    for (const name of rings.keys()) if (!seen.has(name)) rings.delete(name)
  }

  const cancel: CancelTimer = deps.clock.every(intervalMs, sample)
  return {
    intervalMs,
    of: (domain) => rings.get(domain.toLowerCase())?.toArray() ?? [],
    sample,
    stop: cancel,
  }
}
