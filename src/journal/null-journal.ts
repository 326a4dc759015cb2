/**
 * The journal switched off (`journal.enabled: false`): every append resolves at once and nothing
 * survives a restart. It exists for one reason: to measure what the journal costs (bench/,
 * docs/bench.md) in the same run as with it. Never for production: a crash loses every pending result.
 */
import type { Journal, JournalReplay } from './types.js'

const EMPTY: JournalReplay = { openRequests: [], unsettledIntents: [], pendingResults: [], deadLetters: [], idempotencyKeys: [] }
const done = (): Promise<void> => Promise.resolve()

export function nullJournal(): Journal {
  return {
    intended: done,
    unplaced: done,
    accepted: done,
    ended: done,
    followed: done,
    result: done,
    notice: done,
    attempted: done,
    acked: done,
    deadLetter: done,
    revived: done,
    replay: () => EMPTY,
    deadLetters: () => [],
    stats: () => ({ appended: 0, commits: 0, compactions: 0, writeErrors: 0, openRequests: 0, pendingResults: 0, deadLetters: 0, segmentBytes: 0 }),
    close: done,
  }
}
