/**
 * What a section handler decided: a document, or "not found" with the reason (for the debug log).
 * A document kept across requests (document-cache.ts) comes with its UTF-8 bytes, which the
 * listener writes as they are instead of encoding the text again per request.
 */
export type SectionAnswer =
  | { readonly found: true; readonly xml: string; readonly bytes?: Buffer }
  | { readonly found: false; readonly reason: string }

export const found = (xml: string): SectionAnswer => ({ found: true, xml })
export const foundKept = (doc: { readonly xml: string; readonly bytes: Buffer }): SectionAnswer => ({ found: true, xml: doc.xml, bytes: doc.bytes })
export const notFound = (reason: string): SectionAnswer => ({ found: false, reason })
