/**
 * Idempotent retries (issue 11 item 5; README "Idempotency-Key", docs/api.md): a client that
 * timed out waiting for a reply can send the same request again with the same `Idempotency-Key`
 * header and never make a second call.
 *
 * - The key: 1-255 visible ASCII characters (0x21-0x7E), scoped per domain; anything else is
 *   `400 invalid_parameter`. Without the header nothing changes.
 * - The same key with the same request (same operation, same JSON body: key order and
 *   whitespace do not matter) within 24 h of the first `200`: that reply again, byte for byte
 *   (same UUIDs), with `Idempotent-Replayed: true`; nothing is placed.
 * - The same key with another operation or body: `409 idempotency_key_reused`.
 * - While the first request with a key is still being placed, a repeat with the same body waits
 *   for its reply; with another body it is refused at once (409).
 * - Only `200` replies are kept: an error reply placed nothing (README "An error reply means no
 *   call"), so the same key may be tried again and then places the call.
 * - Kept in the result journal with the accepted request (src/journal, `AcceptedRequest.idempotency`),
 *   so a restart keeps them: the daemon loads the journal's live keys at start (load()).
 *
 * Memory: one entry per key for 24 h (its digest and reply, ~200 bytes).
 */
import { createHash } from 'node:crypto'
import type { IdempotencyEntry } from '../journal/types.js'
import { err, ok, type Result } from '../util/result.js'
import { apiError, type ApiError } from './errors.js'

export const IDEMPOTENCY_HEADER = 'Idempotency-Key'
/** Set on a reply given again for a repeated key. */
export const REPLAYED_HEADER = 'Idempotent-Replayed'
const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000

/** What an Idempotency-Key may be (also the OpenAPI document's pattern, api/openapi/). */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/

/** The header's key, undefined without one, or why it is refused. */
export function parseIdempotencyKey(header: string | string[] | undefined): Result<string | undefined, ApiError> {
  if (header === undefined) return ok(undefined)
  if (Array.isArray(header) || !IDEMPOTENCY_KEY_PATTERN.test(header)) {
    return err(apiError('invalid_parameter', `${IDEMPOTENCY_HEADER}: must be given once, 1-255 visible ASCII characters (no spaces)`))
  }
  return ok(header)
}

/** JSON with object keys sorted, so that two encodings of the same body compare equal. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`
  if (typeof v === 'object' && v !== null) {
    const entries = Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonical(x)}`).join(',')}}`
  }
  return JSON.stringify(v) ?? 'null'
}

/** Hex SHA-256 of the operation and the body's content: what "the same request" means. */
export function requestDigest(operation: string, body: unknown): string {
  return createHash('sha256').update(operation).update('\n').update(canonical(body)).digest('hex')
}

/** What a request carrying a key does. */
export type Claim =
  /** First with this key (or the earlier ones failed): place it, then settle() with the 200 reply, or undefined on an error reply. */
  | { readonly kind: 'new'; settle(reply: string | undefined): void }
  /** Answered before: this reply, again. */
  | { readonly kind: 'replay'; readonly reply: string; readonly requestId: string }
  /** The key was used for another request. */
  | { readonly kind: 'conflict'; readonly error: ApiError }

interface Done {
  readonly digest: string
  readonly reply: string
  readonly requestId: string
  readonly at: number
}

interface InFlight {
  readonly digest: string
  readonly settled: Promise<void>
}

export interface IdempotencyStoreOptions {
  readonly ttlMs?: number
  /** Wall clock (unix ms); Date.now by default. */
  readonly now?: () => number
  /** In a cluster: the keys of every node (src/cluster/, docs/cluster.md), asked after this store. */
  readonly shared?: SharedIdempotency
}

/** What the cluster says of a key this node has not seen. */
export type SharedClaim =
  | { readonly kind: 'new' }
  | { readonly kind: 'replay'; readonly reply: string; readonly requestId: string }
  | { readonly kind: 'conflict' }
  /** The cluster cannot be asked: refused (503), never placed on a guess. */
  | { readonly kind: 'unavailable'; readonly description: string }

/** The Idempotency-Keys of every node of a cluster (src/cluster/idempotency.ts). */
export interface SharedIdempotency {
  /** A request with this key on another node still being placed is waited for. */
  claim(domain: string, key: string, digest: string, requestId: string): Promise<SharedClaim>
  /** The 200 reply to keep for 24 h, or undefined: the request was refused, the key is free again. */
  settle(domain: string, key: string, digest: string, requestId: string, reply: string | undefined): void
}

export class IdempotencyStore {
  /** Insertion order is time order: expired entries are swept from the front. */
  private readonly done = new Map<string, Done>()
  private readonly inFlight = new Map<string, InFlight>()
  private readonly ttlMs: number
  private readonly now: () => number
  private readonly shared: SharedIdempotency | undefined

  constructor(opts: IdempotencyStoreOptions = {}) {
    this.ttlMs = opts.ttlMs ?? IDEMPOTENCY_TTL_MS
    this.now = opts.now ?? Date.now
    this.shared = opts.shared
  }

  /** The keys the journal kept (JournalReplay.idempotencyKeys), oldest first. */
  load(entries: readonly IdempotencyEntry[]): void {
    for (const e of [...entries].sort((a, b) => a.acceptedAt - b.acceptedAt)) {
      this.remember(e.domain, e.fields.key, { digest: e.fields.bodyDigest, reply: e.fields.reply, requestId: e.requestId, at: e.acceptedAt })
    }
  }

  get size(): number {
    this.sweep()
    return this.done.size
  }

  /**
   * Claims the key for a request with this digest. A repeat of a request still in flight waits
   * for it (and claims the key itself if that one ended with an error reply).
   */
  async claim(domain: string, key: string, digest: string, requestId: string): Promise<Claim> {
    const id = slot(domain, key)
    for (;;) {
      this.sweep()
      const d = this.done.get(id)
      if (d !== undefined) return d.digest === digest ? { kind: 'replay', reply: d.reply, requestId: d.requestId } : reused()
      const running = this.inFlight.get(id)
      if (running === undefined) break
      if (running.digest !== digest) return reused()
      await running.settled
    }
    let release!: () => void
    const settled = new Promise<void>((r) => (release = r))
    this.inFlight.set(id, { digest, settled })
    const shared = this.shared
    if (shared !== undefined) {
      // Held in flight here meanwhile: a repeat on this node waits for the cluster's word too.
      const s = await shared.claim(domain, key, digest, requestId)
      if (s.kind !== 'new') {
        this.inFlight.delete(id)
        release()
        if (s.kind === 'replay') return { kind: 'replay', reply: s.reply, requestId: s.requestId }
        if (s.kind === 'conflict') return reused()
        return { kind: 'conflict', error: apiError('cluster_unavailable', `${IDEMPOTENCY_HEADER} cannot be checked across the cluster: ${s.description}`) }
      }
    }
    return {
      kind: 'new',
      settle: (reply) => {
        if (this.inFlight.get(id)?.settled !== settled) return
        this.inFlight.delete(id)
        if (reply !== undefined) this.remember(domain, key, { digest, reply, requestId, at: this.now() })
        shared?.settle(domain, key, digest, requestId, reply)
        release()
      },
    }
  }

  /**
   * A key whose request an earlier run had begun to place without deciding its reply (the
   * journal's unsettled intents): repeats wait, as for a request in flight, until recovery
   * settles it with the 200 it would have had (the call was placed) or with undefined (it was
   * not: a repeat then places it).
   */
  pending(domain: string, key: string, digest: string, requestId: string, at: number = this.now()): (reply: string | undefined) => void {
    const id = slot(domain, key)
    let release!: () => void
    const settled = new Promise<void>((r) => (release = r))
    this.inFlight.set(id, { digest, settled })
    return (reply) => {
      if (this.inFlight.get(id)?.settled !== settled) return
      this.inFlight.delete(id)
      if (reply !== undefined) this.remember(domain, key, { digest, reply, requestId, at })
      release()
    }
  }

  private remember(domain: string, key: string, d: Done): void {
    if (this.now() - d.at >= this.ttlMs) return
    const id = slot(domain, key)
    this.done.delete(id)
    this.done.set(id, d)
  }

  private sweep(): void {
    const now = this.now()
    for (const [id, d] of this.done) {
      if (now - d.at < this.ttlMs) break
      this.done.delete(id)
    }
  }
}

const slot = (domain: string, key: string): string => `${domain.toLowerCase()}\n${key}`

const reused = (): Claim => ({
  kind: 'conflict',
  error: apiError('idempotency_key_reused', `this ${IDEMPOTENCY_HEADER} was used within 24 h for another request (another operation or body); use a new key`),
})

/** The store the daemon starts with: the keys its journal kept (a restart answers repeats as before). */
export function idempotencyStoreOf(entries: readonly IdempotencyEntry[], opts: IdempotencyStoreOptions = {}): IdempotencyStore {
  const store = new IdempotencyStore(opts)
  store.load(entries)
  return store
}
