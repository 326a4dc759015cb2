/**
 * Issue 30 item 4: received faxes older than `ivr.fax_retention_days` are deleted, at the start
 * and every hour, on a fake clock (src/ivr/fax/retention.ts): only under `received_faxes/` of
 * each domain, folders walked, faxes to send and symbolic links never touched, and what is
 * newer kept until it ages.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { daemonSchema } from '../../src/config/schema.js'
import { FAX_SWEEP_INTERVAL_MS, startFaxRetention, sweepReceivedFaxes } from '../../src/ivr/fax/retention.js'
import { systemClock } from '../../src/util/clock.js'
import { silentLogger } from '../../src/util/logger.js'
import { withFakeClock } from '../support/fake-clock.js'

const DAY = 86_400_000

function tree(t: Test): string {
  const root = mkdtempSync(join(tmpdir(), 'cod-fax-ret-'))
  t.teardown(() => rmSync(root, { recursive: true, force: true }))
  return root
}

/** Writes a file whose modification time is `ageMs` before `now`. */
function file(path: string, now: number, ageMs: number): string {
  mkdirSync(join(path, '..'), { recursive: true })
  writeFileSync(path, 'II*\0')
  const at = (now - ageMs) / 1000
  utimesSync(path, at, at)
  return path
}

t.test('ivr.fax_retention_days: 30 by default, 1-3650', async (t) => {
  const base = { freeswitch: { mode: 'simulator' }, xml_curl: { username: 'fs', password: 'xml-curl-secret' } }
  t.equal(daemonSchema.parse(base).ivr.fax_retention_days, 30)
  for (const bad of [0, 3651, 1.5, '7']) t.equal(daemonSchema.safeParse({ ...base, ivr: { fax_retention_days: bad } }).success, false, String(bad))
})

t.test('one sweep: old received faxes go, new ones, faxes to send and links stay', async (t) => {
  const root = tree(t)
  const now = Date.parse('2026-11-28T12:00:00Z')
  const outside = join(root, 'outside')
  const oldOne = file(join(root, 'a.test', 'received_faxes', 'old.tif'), now, 31 * DAY)
  const oldDeep = file(join(root, 'a.test', 'received_faxes', 'orders', '2025', 'deep.tif'), now, 40 * DAY)
  const fresh = file(join(root, 'a.test', 'received_faxes', 'new.tif'), now, 29 * DAY)
  const toSend = file(join(root, 'a.test', 'invoices', 'old-invoice.tif'), now, 400 * DAY)
  const otherDomain = file(join(root, 'b.test', 'received_faxes', 'old.tif'), now, 31 * DAY)
  const secret = file(join(outside, 'secret.tif'), now, 400 * DAY)
  symlinkSync(outside, join(root, 'a.test', 'received_faxes', 'link'))
  const removed = await sweepReceivedFaxes({ root, now, retentionDays: 30, logger: silentLogger() })
  t.equal(removed, 3)
  t.notOk(existsSync(oldOne), 'an old fax is deleted')
  t.notOk(existsSync(oldDeep), 'in folders too')
  t.notOk(existsSync(otherDomain), 'of every domain')
  t.ok(existsSync(fresh), 'a newer one stays')
  t.ok(existsSync(toSend), 'faxes to send are never touched')
  t.ok(existsSync(secret), 'a link is not followed')
  t.ok(existsSync(join(root, 'a.test', 'received_faxes', 'link')), 'nor removed')
  t.equal(await sweepReceivedFaxes({ root: join(root, 'missing'), now, retentionDays: 30, logger: silentLogger() }), 0, 'no folder: nothing to do')
})

t.test('on a fake clock: swept at the start, then every hour as files age', async (t) => {
  const root = tree(t)
  await withFakeClock(async (clock) => {
    const now = clock.now()
    const old = file(join(root, 'a.test', 'received_faxes', 'old.tif'), now, 31 * DAY)
    // Reaches 30 days in 30 minutes of the fake clock.
    const soon = file(join(root, 'a.test', 'received_faxes', 'soon.tif'), now, 30 * DAY - 30 * 60_000)
    const retention = startFaxRetention({ settings: () => ({ root, retentionDays: 30 }), clock: systemClock, wallNow: () => Date.now(), logger: silentLogger() })
    await clock.runUntil('the first sweep', () => !existsSync(old), () => true)
    t.ok(existsSync(soon), 'not yet old at the start')
    await clock.advance(FAX_SWEEP_INTERVAL_MS - 1)
    await clock.runUntil('the sweep to settle', () => true, () => true)
    t.ok(existsSync(soon), 'before the hour, no sweep')
    await clock.advance(1)
    await clock.runUntil('the hourly sweep', () => !existsSync(soon), () => true)
    t.pass('the hourly sweep deleted it once it aged')
    await retention.stop()
    t.equal(clock.pending(), 0, 'stopping leaves no timer')
  })
})
