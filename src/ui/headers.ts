/**
 * The security headers of every response of the live calls page (docs/ui.md "Security"). The
 * page shows call metadata typed by strangers (caller names, end_user fields), so the browser is
 * told to run nothing but the page's own files, even if a value ever reached the DOM as markup:
 *
 * - `script-src 'self'`, `style-src 'self'`: no inline script or style, no eval; only the files
 *   of src/ui/static/ served from this origin.
 * - `require-trusted-types-for 'script'; trusted-types 'none'`: the browser refuses any string
 *   assigned to innerHTML, outerHTML, document.write and the like, so the page can only put
 *   values in with textContent (which it does).
 * - `connect-src 'self'`: fetch and WebSocket only to this origin ('self' covers ws:/wss: of
 *   the same host, CSP Level 3), so a token typed into the page can go nowhere else.
 * - `form-action 'none'`, `base-uri 'none'`, `frame-ancestors 'none'` (no clickjacking), and
 *   `default-src 'none'` for everything not listed.
 */

/** @internal Exported for tests: test/ui checks the header. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "require-trusted-types-for 'script'",
  "trusted-types 'none'",
].join('; ')

export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': CONTENT_SECURITY_POLICY,
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
  // Small files, read at start: revalidated each time, so an upgrade is seen at the next load.
  'Cache-Control': 'no-cache',
}
