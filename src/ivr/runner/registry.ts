/**
 * IVR sources of API requests (`xml_url:` destinations), registered by the origination engine
 * before it originates and taken by the session that runs them. The channel only carries the
 * key (`cod_ivr_request`), never the document.
 *
 * Entries expire: a request whose leg is never answered leaves its entry behind, so every entry
 * has a deadline (default 2 h: above the longest answer_timeout of 3600 s) and the map is
 * bounded (oldest first out). Expired entries are dropped from the front on every call: no timer.
 */
import type { IvrSource } from '../source.js'

export interface SourceRegistryOptions {
  readonly ttlMs?: number
  readonly maxEntries?: number
  readonly now?: () => number
}

interface Entry {
  readonly source: IvrSource
  readonly expires: number
}

const DEFAULT_SOURCE_TTL_MS = 2 * 3600_000
const DEFAULT_MAX_SOURCES = 10_000

export class SourceRegistry {
  /** In deadline order as long as every entry gets the same TTL (the usual case); see sweep(). */
  private readonly entries = new Map<string, Entry>()
  private readonly ttlMs: number
  private readonly maxEntries: number
  private readonly now: () => number

  constructor(opts: SourceRegistryOptions = {}) {
    this.ttlMs = opts.ttlMs ?? DEFAULT_SOURCE_TTL_MS
    this.maxEntries = opts.maxEntries ?? DEFAULT_MAX_SOURCES
    this.now = opts.now ?? Date.now
  }

  private static id(domain: string, key: string): string {
    return `${domain.toLowerCase()}\u0000${key}`
  }

  register(domain: string, key: string, source: IvrSource, ttlMs?: number): void {
    this.sweep()
    const id = SourceRegistry.id(domain, key)
    this.entries.delete(id)
    this.entries.set(id, { source, expires: this.now() + (ttlMs ?? this.ttlMs) })
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next()
      if (oldest.done === true) break
      this.entries.delete(oldest.value)
    }
  }

  has(domain: string, key: string): boolean {
    this.sweep()
    const e = this.entries.get(SourceRegistry.id(domain, key))
    return e !== undefined && e.expires > this.now()
  }

  /** The source, removed: one answered leg runs it once. */
  take(domain: string, key: string): IvrSource | undefined {
    this.sweep()
    const id = SourceRegistry.id(domain, key)
    const e = this.entries.get(id)
    this.entries.delete(id)
    return e !== undefined && e.expires > this.now() ? e.source : undefined
  }

  get size(): number {
    return this.entries.size
  }

  /** Drops expired entries from the front (a shorter per-entry TTL is caught by has/take's own check). */
  private sweep(): void {
    const now = this.now()
    for (const [id, e] of this.entries) {
      if (e.expires > now) break
      this.entries.delete(id)
    }
  }
}
