/**
 * Wall-clock parts in an IANA time zone, for `hour()`, `minute()`, `weekday()` and `date()`.
 * Intl does the zone arithmetic (daylight saving included), so no tz database of our own.
 */
import { err, ok, type Result } from '../../util/result.js'

export interface ClockParts {
  /** YYYY-MM-DD */
  readonly date: string
  /** 0-23 */
  readonly hour: number
  /** 0-59 */
  readonly minute: number
  /** 0 = Monday ... 6 = Sunday (Python's datetime.weekday()). */
  readonly weekday: number
}

const WEEKDAYS: Readonly<Record<string, number>> = { Mon: 0, Tue: 1, Wed: 2, Thu: 3, Fri: 4, Sat: 5, Sun: 6 }

// A formatter is costly to build and the zones in use are the few configured for domains.
const formatters = new Map<string, Intl.DateTimeFormat>()
const MAX_CACHED_ZONES = 256

function formatter(timeZone: string): Result<Intl.DateTimeFormat, string> {
  const cached = formatters.get(timeZone)
  if (cached) return ok(cached)
  let f: Intl.DateTimeFormat
  try {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      weekday: 'short',
      // h23, not hour12: false, which some ICU versions render as "24" at midnight.
      hourCycle: 'h23',
    })
  } catch {
    return err(`unknown time zone ${JSON.stringify(timeZone)}`)
  }
  if (formatters.size >= MAX_CACHED_ZONES) formatters.clear()
  formatters.set(timeZone, f)
  return ok(f)
}

export function clockParts(now: Date, timeZone: string): Result<ClockParts, string> {
  if (Number.isNaN(now.getTime())) return err('the clock gave an invalid date')
  const f = formatter(timeZone)
  if (!f.ok) return f
  const parts: Record<string, string> = {}
  for (const p of f.value.formatToParts(now)) parts[p.type] = p.value
  const weekday = WEEKDAYS[parts.weekday ?? '']
  const year = parts.year ?? ''
  if (weekday === undefined || !/^\d{4}$/.test(year)) return err('date outside the supported range')
  return ok({
    date: `${year}-${parts.month}-${parts.day}`,
    hour: Number(parts.hour),
    minute: Number(parts.minute),
    weekday,
  })
}
