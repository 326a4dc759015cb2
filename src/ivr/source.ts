/**
 * Where an XML IVR document comes from: the `xml_url:` destination of an API request, kept by
 * the runner's source registry until the answered leg runs it. It belongs to the IVR (the API
 * parses it, the origination engine carries it in its plan and hands it to the runner), so
 * origination imports it from here and the IVR never imports origination.
 */

/** `urls` holds fallbacks in order (comma list). */
export type IvrSource =
  | { readonly kind: 'url'; readonly urls: readonly string[] }
  | { readonly kind: 'inline'; readonly xml: string }
