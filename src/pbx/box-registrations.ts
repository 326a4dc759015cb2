/**
 * The registrations of this daemon's box, as FreeSWITCH reports them, for a part that publishes
 * them (a cluster node, docs/cluster.md "Registrations everywhere"): the sofia registration
 * events read into changes, the whole table (`show registrations as json`), and whether one user
 * still has a terminal (`sofia_contact`). Event and reply shapes:
 * test/fixtures/freeswitch/esl/27-sofia-register-events.txt.
 *
 * Nothing is subscribed until `onChange` is called: a single daemon never is, and receives no
 * more events than before.
 */
import * as commands from './commands.js'
import type { PbxConnection } from './connection.js'
import { parseSofiaContacts } from './replies.js'
import type { FsEvent } from './types.js'
import { err, ok, type Result } from '../util/result.js'

/** The CUSTOM subclasses of mod_sofia's registrar (sofia_reg.c, as in the capture). */
const SOFIA_REGISTRATION_SUBCLASSES = ['sofia::register', 'sofia::unregister', 'sofia::expire'] as const

export type RegistrationChange =
  /** A terminal registered or re-registered; `expiresInS` as the phone asked (seconds). */
  | { readonly kind: 'register'; readonly user: string; readonly domain: string; readonly expiresInS: number }
  /** A terminal went (REGISTER Expires: 0, or its registration expired): the user may have others. */
  | { readonly kind: 'unregister' | 'expire'; readonly user: string; readonly domain: string }

export interface RegisteredUser {
  readonly user: string
  readonly domain: string
  /** When the registration runs out (epoch ms), as FreeSWITCH counts it. */
  readonly expiresAt: number
}

export interface BoxRegistrations {
  /** Follows the box's registration events (subscribes on the first call, and on every later socket). */
  onChange(listener: (change: RegistrationChange) => void): void
  /** After each (re)connection to the box: when its table must be read again. */
  onConnected(listener: () => void): void
  /** The box's registered users, one entry per user and domain. */
  list(): Promise<Result<RegisteredUser[], string>>
  /** Whether the user still has a registered terminal on the box. */
  isRegistered(user: string, domain: string): Promise<Result<boolean, string>>
}

/**
 * A sofia registration event as a change; undefined for what is not one (another subclass, no
 * user). The user is sofia's `username` (the name the directory authenticated, what
 * sofia_contact looks up), falling back to `user`/`from-user`; the domain is the `realm`.
 * @internal Exported for tests: test/pbx feeds it captured events.
 */
export function registrationChange(e: FsEvent): RegistrationChange | undefined {
  const kind = ({ 'sofia::register': 'register', 'sofia::unregister': 'unregister', 'sofia::expire': 'expire' } as const)[e['Event-Subclass'] ?? '']
  if (kind === undefined) return undefined
  const user = e['username'] ?? e['user'] ?? e['from-user']
  const domain = e['realm'] ?? e['host'] ?? e['from-host']
  if (user === undefined || user === '' || domain === undefined || domain === '') return undefined
  if (kind !== 'register') return { kind, user, domain }
  const expires = Number(e['expires'])
  return { kind, user, domain, expiresInS: Number.isFinite(expires) && expires > 0 ? expires : 0 }
}

/**
 * `show registrations as json`: `{"row_count": 0}` when none, else rows of strings.
 * @internal Exported for tests: test/pbx feeds it captured replies.
 */
export function parseRegistrations(body: string): Result<RegisteredUser[], string> {
  let doc: unknown
  try {
    doc = JSON.parse(body)
  } catch {
    return err(`not JSON: ${body.slice(0, 80)}`)
  }
  if (typeof doc !== 'object' || doc === null || typeof (doc as { row_count?: unknown }).row_count !== 'number') return err(`no row_count: ${body.slice(0, 80)}`)
  const rows = (doc as { rows?: unknown }).rows
  if (rows === undefined) return ok([])
  if (!Array.isArray(rows)) return err('rows is not a list')
  const users = new Map<string, RegisteredUser>()
  for (const row of rows as Array<Record<string, unknown>>) {
    const user = row['reg_user']
    const domain = row['realm']
    if (typeof user !== 'string' || typeof domain !== 'string' || user === '' || domain === '') continue
    const expiresAt = Number(row['expires']) * 1000
    const key = `${domain.toLowerCase()}/${user.toLowerCase()}`
    const seen = users.get(key)
    if (seen === undefined || expiresAt > seen.expiresAt) users.set(key, { user, domain, expiresAt: Number.isFinite(expiresAt) ? expiresAt : 0 })
  }
  return ok([...users.values()])
}

export function boxRegistrations(pbx: PbxConnection, commandTimeoutMs: number): BoxRegistrations {
  return {
    onChange(listener) {
      pbx.onCustomEvent(SOFIA_REGISTRATION_SUBCLASSES, (e) => {
        const change = registrationChange(e)
        if (change !== undefined) listener(change)
      })
    },
    onConnected(listener) {
      pbx.onConnected(listener)
    },
    async list() {
      const cmd = commands.showRegistrationsJson()
      if (!cmd.ok) return err(cmd.error.reason)
      const r = await pbx.bgapi(cmd.value, commandTimeoutMs)
      if (!r.ok) return err(`show registrations: ${r.error.kind}`)
      return parseRegistrations(r.value)
    },
    async isRegistered(user, domain) {
      const cmd = commands.sofiaContact(user, domain, '*')
      if (!cmd.ok) return err(cmd.error.reason)
      const r = await pbx.api(cmd.value, commandTimeoutMs)
      if (!r.ok) return err(`sofia_contact: ${r.error.kind}`)
      return ok(parseSofiaContacts(r.value).kind !== 'not_registered')
    },
  }
}
