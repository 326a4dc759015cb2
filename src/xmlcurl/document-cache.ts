/**
 * The directory documents, written once per configuration and served from memory. A user's
 * document (and the domain's) depends on the configuration alone (directory-section.ts), while
 * FreeSWITCH asks for it at every REGISTER and every `user/` dial; writing it with xmlbuilder2
 * each time cost ~0.3 ms of CPU (issue 15, docs/bench.md).
 *
 * Invalidation: a reload builds a new Directory, hence new DomainDirectory objects
 * (runtime/store.ts runtimeOf), and requests read the runtime afresh each time (router.ts). The
 * documents are kept in a WeakMap keyed by the DomainDirectory they were written from, so a
 * reloaded configuration never meets the documents of the one before, and those go away with
 * it. A document that cannot be written (UnsafeValueError) is not kept: it throws again, each
 * time, as before.
 */
import type { DomainDirectory, User } from '../directory/directory.js'

/** A document as text (tests, logs) and as the bytes written to FreeSWITCH. */
export interface KeptDocument {
  readonly xml: string
  readonly bytes: Buffer
}

interface DomainDocuments {
  domain?: KeptDocument
  readonly users: Map<User, KeptDocument>
}

const kept = new WeakMap<DomainDirectory, DomainDocuments>()

const keep = (xml: string): KeptDocument => ({ xml, bytes: Buffer.from(xml, 'utf8') })

function documentsOf(domain: DomainDirectory): DomainDocuments {
  let docs = kept.get(domain)
  if (docs === undefined) {
    docs = { users: new Map() }
    kept.set(domain, docs)
  }
  return docs
}

/** The domain's own document (no user), written by `write` the first time it is asked for. */
export function keptDomainDocument(domain: DomainDirectory, write: () => string): KeptDocument {
  const docs = documentsOf(domain)
  docs.domain ??= keep(write())
  return docs.domain
}

/** A user's document, written by `write` the first time it is asked for in this configuration. */
export function keptUserDocument(domain: DomainDirectory, user: User, write: () => string): KeptDocument {
  const docs = documentsOf(domain)
  let doc = docs.users.get(user)
  if (doc === undefined) {
    doc = keep(write())
    docs.users.set(user, doc)
  }
  return doc
}
