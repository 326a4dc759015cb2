/**
 * The live calls page at `/ui/` on the API listener (docs/ui.md): a small static router for the
 * files of src/ui/static/, each sent with the page's security headers (headers.ts). The page
 * itself talks to the daemon's public API only (gen_ws_ticket, then ws_cti with a read-only
 * monitor ticket; the calls' hangup and transfer routes, finished_calls and channel_samples with
 * the token), so this router needs nothing but the API prefix, which it writes into the page.
 *
 * Outside `http.prefix` and without authentication: the files are the same for everyone and
 * hold no secret; what the page shows needs the domain's token, typed into it.
 */
import Router from '@koa/router'
import type { Context } from 'koa'
import { ok, type Result } from '../util/result.js'
import { DEFAULT_STATIC_DIR, loadAssets, type Asset } from './assets.js'
import { SECURITY_HEADERS } from './headers.js'

/** Where the page is served (fixed: it is outside the API prefix). */
const UI_PATH = '/ui'

export interface UiOptions {
  /** `http.prefix`: the page asks `{prefix}/gen_ws_ticket` and opens `{prefix}/ws_cti`. */
  readonly apiPrefix: string
  /** The folder of the page files (src/ui/static/ beside this module by default; tests may give another). */
  readonly staticDir?: URL
}

function secure(ctx: Context): void {
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) ctx.set(name, value)
}

function serve(ctx: Context, asset: Asset): void {
  secure(ctx)
  ctx.set('ETag', asset.etag)
  ctx.type = asset.type
  if (ctx.get('If-None-Match') === asset.etag) {
    ctx.status = 304
    return
  }
  ctx.body = asset.body
}

/** The page's router; an error when its files cannot be read (a build that did not copy them). */
export function uiRouter(opts: UiOptions): Result<Router, string> {
  const loaded = loadAssets(opts.apiPrefix, opts.staticDir ?? DEFAULT_STATIC_DIR)
  if (!loaded.ok) return loaded
  const assets = loaded.value
  // strict: `/ui` and `/ui/` are different routes (the first only redirects to the second).
  const router = new Router({ strict: true })
  // The page's relative URLs (style.css, app.js) need the trailing slash.
  router.get(UI_PATH, (ctx) => {
    secure(ctx)
    ctx.status = 308
    ctx.set('Location', `${UI_PATH}/`)
  })
  const index = assets.get('index.html')
  if (index !== undefined) router.get(`${UI_PATH}/`, (ctx) => serve(ctx, index))
  for (const [name, asset] of assets) router.get(`${UI_PATH}/${name}`, (ctx) => serve(ctx, asset))
  return ok(router)
}
