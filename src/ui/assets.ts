/**
 * The files of the live calls page (src/ui/static/), read once at start into memory. Only the
 * files named here are ever served: a request path never becomes a file path, so nothing else
 * on the disk can be reached through /ui/.
 *
 * The build copies src/ui/static/ to dist/ui/static/ (package.json "build"); the folder is found
 * beside this module, so the same code serves src/ under tsx and dist/ in production.
 */
import { readFileSync } from 'node:fs'
import { createHash } from 'node:crypto'
import { err, ok, type Result } from '../util/result.js'

export interface Asset {
  readonly body: Buffer
  readonly type: string
  /** Strong validator for If-None-Match (the files change only with an upgrade). */
  readonly etag: string
}

/**
 * The page's files and their types; nothing else is served.
 * @internal Exported for tests: test/ui checks every static file has a type.
 */
export const ASSET_TYPES: Readonly<Record<string, string>> = {
  'index.html': 'text/html; charset=utf-8',
  'style.css': 'text/css; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'calls.js': 'text/javascript; charset=utf-8',
  'table.js': 'text/javascript; charset=utf-8',
  'session.js': 'text/javascript; charset=utf-8',
  'finished.js': 'text/javascript; charset=utf-8',
  'chart.js': 'text/javascript; charset=utf-8',
  'favicon.svg': 'image/svg+xml',
}

/** Where index.html names the API prefix; the page reads it from this meta tag (no inline script). */
const PREFIX_PLACEHOLDER = '{{API_PREFIX}}'

const escapeAttribute = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

export const DEFAULT_STATIC_DIR = new URL('./static/', import.meta.url)

/** Reads every page file; an error names the first file that could not be read (a build without the copy step). */
export function loadAssets(apiPrefix: string, dir: URL = DEFAULT_STATIC_DIR): Result<ReadonlyMap<string, Asset>, string> {
  const assets = new Map<string, Asset>()
  for (const [name, type] of Object.entries(ASSET_TYPES)) {
    let body: Buffer
    try {
      body = readFileSync(new URL(name, dir))
    } catch (e) {
      return err(`cannot read the page file ${new URL(name, dir).pathname} (${(e as NodeJS.ErrnoException).code ?? String(e)}); npm run build copies src/ui/static/ to dist/ui/static/`)
    }
    if (name === 'index.html') body = Buffer.from(body.toString('utf8').replace(PREFIX_PLACEHOLDER, escapeAttribute(apiPrefix)), 'utf8')
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`
    assets.set(name, { body, type, etag })
  }
  return ok(assets)
}
