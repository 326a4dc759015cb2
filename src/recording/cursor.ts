/**
 * Pages of a domain's recordings, newest first (GET {prefix}/recordings?limit=&after=). The
 * cursor names the last record of a page by its sort key (start time, then id), not by its
 * position, so a recording deleted or added between two pages neither repeats nor skips one.
 */
import { err, ok, type Result } from '../util/result.js'
import { RECORDING_ID_RE } from './id.js'
import type { ListQuery, RecordingPage, RecordingRecord } from './types.js'

interface SortKey {
  readonly at: number
  readonly id: string
}

const CURSOR_RE = new RegExp(`^([0-9]{1,15})\\.(${RECORDING_ID_RE.source.slice(1, -1)})$`)

const keyOf = (r: RecordingRecord): SortKey => ({ at: Date.parse(r.startedAt), id: r.id })

/** Newest first; equal start times by id, descending, so the order is total. */
const newerFirst = (a: SortKey, b: SortKey): number => b.at - a.at || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0)

const cursorOf = (k: SortKey): string => `${k.at}.${k.id}`

function parseCursor(after: string): Result<SortKey, string> {
  const m = CURSOR_RE.exec(after)
  if (m === null) return err('after: must be the "next" of an earlier page')
  return ok({ at: Number(m[1]), id: m[2] as string })
}

/** One page of `records` (any order) for `query`. */
export function pageOf(records: Iterable<RecordingRecord>, query: ListQuery): Result<RecordingPage, string> {
  let from: SortKey | undefined
  if (query.after !== undefined) {
    const parsed = parseCursor(query.after)
    if (!parsed.ok) return parsed
    from = parsed.value
  }
  const keyed = [...records].map((r) => ({ r, k: keyOf(r) }))
  const after = from === undefined ? keyed : keyed.filter(({ k }) => newerFirst(from, k) < 0)
  after.sort((a, b) => newerFirst(a.k, b.k))
  const page = after.slice(0, query.limit)
  const last = page[page.length - 1]
  return ok({ recordings: page.map(({ r }) => r), ...(after.length > query.limit && last !== undefined ? { next: cursorOf(last.k) } : {}) })
}
