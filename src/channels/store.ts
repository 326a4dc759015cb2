/**
 * The table of live channels with the three ways it changes: a FreeSWITCH event
 * (event-reducer.ts), a re-read of the live channels after a (re)connection (reconcile.ts), and
 * the sweep of hung-up channels whose CHANNEL_DESTROY never came. Synchronous and free of I/O:
 * model.ts feeds it from the ESL connection and publishes what it returns.
 */
import { performance } from 'node:perf_hooks'
import { applyEvent, type ReducerContext } from './event-reducer.js'
import { reconcile, type ResyncRow } from './reconcile.js'
import { ChannelTable } from './table.js'
import type { FsEvent } from '../pbx/types.js'
import type { ChannelChange, ChannelDirectory } from './types.js'

export interface StoreOptions {
  /** Configured domains and users; without it any domain name places a channel and users are known only from cod_user_id. */
  readonly directory?: () => ChannelDirectory
  /** Clock (epoch ms) for changes no event dates; Date.now by default. */
  readonly now?: () => number
}

/** A re-read in progress: only the latest one begun may be applied. */
export interface ResyncToken {
  readonly generation: number
  /** The table's event counter when it began: channels heard of later keep what their events said. */
  readonly sinceSeq: number
  /** performance.now() when it began. */
  readonly startedAt: number
}

export class ChannelStore extends ChannelTable {
  private readonly directory: (() => ChannelDirectory) | undefined
  private readonly now: () => number
  private readonly ctx: ReducerContext
  private generation = 0
  private open: number | undefined

  constructor(options: StoreOptions = {}) {
    super()
    this.directory = options.directory
    this.now = options.now ?? Date.now
    this.ctx = { directory: this.directory, now: this.now }
  }

  /** Applies one FreeSWITCH event; returns the changes it made (none for events about no channel). */
  apply(ev: FsEvent): ChannelChange[] {
    return applyEvent(this, ev, this.ctx)
  }

  /** Starts a re-read; a later beginResync() makes this one's rows stale. */
  beginResync(): ResyncToken {
    this.generation += 1
    this.open = this.generation
    return { generation: this.generation, sinceSeq: this.lastSeq, startedAt: performance.now() }
  }

  /** Applies the rows of a re-read; undefined when a newer re-read began meanwhile (its rows will be applied instead). */
  finishResync(token: ResyncToken, rows: readonly ResyncRow[]): ChannelChange[] | undefined {
    if (this.open !== token.generation) return undefined
    this.open = undefined
    return reconcile(this, rows, token.sinceSeq, this.now(), this.directory?.())
  }

  /** Removes channels hung up for longer than `olderThanMs` whose CHANNEL_DESTROY never came (lost with a connection). */
  sweep(olderThanMs: number): ChannelChange[] {
    const limit = this.now() - olderThanMs
    const changes: ChannelChange[] = []
    for (const ch of [...this.all()]) {
      if (ch.state === 'hangup' && ch.stateAt <= limit) {
        this.remove(ch)
        changes.push({ kind: 'destroyed', channel: ch })
      }
    }
    return changes
  }
}
