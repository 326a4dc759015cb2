/** What a section handler decided: a document, or "not found" with the reason (for the debug log). */
export type SectionAnswer = { readonly found: true; readonly xml: string } | { readonly found: false; readonly reason: string }

export const found = (xml: string): SectionAnswer => ({ found: true, xml })
export const notFound = (reason: string): SectionAnswer => ({ found: false, reason })
