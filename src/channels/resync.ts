/**
 * The re-read of FreeSWITCH's live channels after each (re)connection, and whenever origination
 * has lost an originate's result: `show channels as json`
 * (test/fixtures/freeswitch/esl/03-show-channels-live-call.txt), then for each channel we never
 * heard of, our `cod_domain`, `cod_request_id` and `cod_role` with `uuid_getvar` (a few channels at
 * a time), then the store applies it all at once (reconcile.ts).
 *
 * One re-read runs at a time; a call while one runs schedules one more after it (the running one
 * may have read the list before the caller's reason to ask).
 */
import { CHANNEL_VARS } from '../pbx/channel-vars.js'
import * as commands from '../pbx/commands.js'
import { parseShowChannels, type ChannelRow } from '../pbx/replies.js'
import type { PbxClient } from '../pbx/types.js'
import type { Logger } from '../util/logger.js'
import { err, ok, type Result } from '../util/result.js'
import type { ReadBackVars, ResyncRow } from './reconcile.js'
import type { ChannelStore } from './store.js'
import type { ChannelChange } from './types.js'

/** uuid_getvar round trips in flight at once. */
const READ_BATCH = 16

export interface ResyncDeps {
  readonly pbx: PbxClient
  readonly store: ChannelStore
  readonly logger: Logger
  readonly commandTimeoutMs: number
  /** Publishes the changes a re-read made. */
  readonly publish: (changes: readonly ChannelChange[]) => void
  /** Told after each re-read applied, with the performance.now() at which it began. */
  readonly resynced: (startedAt: number) => void
}

export type Resync = () => Promise<Result<void, string>>

export function createResync(deps: ResyncDeps): Resync {
  const { pbx, store, logger: log, commandTimeoutMs } = deps

  /** A variable's value, undefined when unset, null when the channel is gone (or the read failed). */
  const getVar = async (uuid: string, name: string): Promise<string | undefined | null> => {
    const cmd = commands.uuidGetVar(uuid, name)
    if (!cmd.ok) return null
    const r = await pbx.bgapi(cmd.value, commandTimeoutMs)
    if (!r.ok) return null
    const v = r.value.replace(/\n$/, '')
    if (v.startsWith('-ERR')) return null
    return v === '_undef_' || v === '' ? undefined : v
  }

  /** Our variables on a channel we never heard of; undefined when it is gone already. */
  const readBack = async (row: ChannelRow): Promise<ReadBackVars | undefined> => {
    const [domain, requestId, role] = await Promise.all([
      getVar(row.uuid, CHANNEL_VARS.domain),
      getVar(row.uuid, CHANNEL_VARS.requestId),
      getVar(row.uuid, CHANNEL_VARS.role),
    ])
    if (domain === null) return undefined
    return { domain, requestId: requestId ?? undefined, role: role ?? undefined }
  }

  const run = async (): Promise<Result<void, string>> => {
    const token = store.beginResync()
    const cmd = commands.showChannelsJson()
    if (!cmd.ok) return err(cmd.error.reason)
    const r = await pbx.bgapi(cmd.value, commandTimeoutMs)
    if (!r.ok) return err(`show channels failed: ${r.error.kind}`)
    const listed = parseShowChannels(r.value)
    if (!listed.ok) return err(`show channels: ${listed.error}`)

    const rows: ResyncRow[] = []
    const unknown: ChannelRow[] = []
    for (const row of listed.value) {
      if (store.get(row.uuid) !== undefined) rows.push({ row })
      else if (!store.wasDestroyed(row.uuid)) unknown.push(row)
    }
    for (let i = 0; i < unknown.length; i += READ_BATCH) {
      const batch = unknown.slice(i, i + READ_BATCH)
      const read = await Promise.all(batch.map(readBack))
      batch.forEach((row, j) => {
        const vars = read[j]
        // Gone meanwhile: it is not live, so it is not listed.
        if (vars !== undefined) rows.push({ row, vars })
      })
    }
    const changes = store.finishResync(token, rows)
    // A newer re-read began meanwhile: its list is the one that counts.
    if (changes === undefined) return ok(undefined)
    log.info({ live: listed.value.length, adopted: unknown.length, changes: changes.length }, 'channels resynchronised')
    deps.publish(changes)
    deps.resynced(token.startedAt)
    return ok(undefined)
  }

  let running: Promise<Result<void, string>> | undefined
  let queued: Promise<Result<void, string>> | undefined
  const resync: Resync = () => {
    if (running === undefined) {
      running = run().finally(() => (running = undefined))
      return running
    }
    queued ??= running.then(() => {
      queued = undefined
      return resync()
    })
    return queued
  }
  return resync
}
