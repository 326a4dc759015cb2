/**
 * Reads the result journal's dead letters without taking the journal: no lock, no file
 * created, renamed or removed, so `cod results list` is safe beside a running daemon (the one
 * writer of its folder, src/journal/lock.ts). It lists the segments itself: the journal's own
 * listSegments creates the folder and removes a compaction's temporary file, which only the
 * owner may do. A line being appended is torn and skipped (as the journal's own open does); a
 * segment removed by a compaction between the listing and the reading makes it read again.
 */
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { decodeRecords } from '../journal/record.js'
import { JournalState } from '../journal/state.js'
import type { DeadLetter } from '../journal/types.js'
import { err, ok, type Result } from '../util/result.js'

const SEGMENT = /^segment-\d{10}\.log$/

export type JournalRead = { readonly kind: 'absent' } | { readonly kind: 'read'; readonly deadLetters: DeadLetter[]; readonly badLines: number }

export async function readDeadLetters(dir: string): Promise<Result<JournalRead, string>> {
  for (let attempt = 0; attempt < 3; attempt++) {
    let names: string[]
    try {
      names = (await readdir(dir)).filter((n) => SEGMENT.test(n)).sort()
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code
      if (code === 'ENOENT') return ok({ kind: 'absent' })
      return err(`journal folder ${dir}: ${code ?? String(e)}`)
    }
    const state = new JournalState()
    let badLines = 0
    let vanished = false
    for (const name of names) {
      let text: string
      try {
        text = await readFile(join(dir, name), 'utf8')
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code
        if (code === 'ENOENT') {
          vanished = true
          break
        }
        return err(`journal segment ${join(dir, name)}: ${code ?? String(e)}`)
      }
      const decoded = decodeRecords(text)
      for (const r of decoded.records) state.apply(r)
      badLines += decoded.bad.filter((b) => b.kind !== 'torn').length
    }
    if (!vanished) return ok({ kind: 'read', deadLetters: state.deadLetters(), badLines })
  }
  return err(`journal folder ${dir}: its segments kept changing while being read; try again`)
}
