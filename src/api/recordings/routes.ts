/**
 * The recordings over the API (issue 28 item 4; docs/recording.md "API"), with the domain's
 * token like the operations:
 *
 * - `GET {prefix}/recordings?limit=&after=` → `{result_code: 0, recordings: [...], next}`, newest first;
 * - `GET {prefix}/recordings/{id}` → `{result_code: 0, recording}`;
 * - `GET {prefix}/recordings/{id}/audio` → the WAV (`Range` → 206, beyond the end → 416);
 * - `DELETE {prefix}/recordings/{id}` → `{result_code: 0}`.
 *
 * An id is only ever a key of the store's records of the authenticated domain: another
 * domain's id, a malformed one and a missing one all answer 404 recording_not_found, and no id
 * from a URL becomes a path (the store makes the audio's path itself, src/util/confined-path.ts).
 */
import { constants } from 'node:fs'
import { open } from 'node:fs/promises'
import Router from '@koa/router'
import type { Context } from 'koa'
import type { DomainDirectory } from '../../directory/directory.js'
import type { RecordingStore } from '../../recording/types.js'
import type { Runtime } from '../../runtime/store.js'
import { domainOfRequest } from '../domain-route.js'
import { apiError, type ApiError } from '../errors.js'
import { parseWith } from '../schema/parse.js'
import { rangeOf } from './range.js'
import { DEFAULT_PAGE, listQuerySchema, viewOf } from './schema.js'

/** What the routes need of the store. */
export type RecordingReader = Pick<RecordingStore, 'get' | 'list' | 'audio' | 'remove'>

export interface RecordingsRouterDeps {
  readonly prefix: string
  readonly runtime: () => Runtime
  readonly recordings: RecordingReader
  /** Answers an error (api/app.ts: the status of errors.ts, the error body, the log line's id). */
  readonly fail: (ctx: Context, e: ApiError) => void
  /** The request's domain, for its log line and metrics. */
  readonly authenticated: (ctx: Context, domain: string) => void
}

const notFound = (id: string): ApiError => apiError('recording_not_found', `no recording ${JSON.stringify(id.slice(0, 64))} in this domain`)

export function recordingsRouter(deps: RecordingsRouterDeps): Router {
  const router = new Router({ prefix: `${deps.prefix}/recordings` })

  const domainOf = (ctx: Context): DomainDirectory | undefined => domainOfRequest(ctx, deps)

  router.get('/', (ctx) => {
    const domain = domainOf(ctx)
    if (domain === undefined) return
    const query = parseWith(listQuerySchema, { ...ctx.query })
    if (!query.ok) return deps.fail(ctx, query.error)
    const page = deps.recordings.list(domain.name, { limit: query.value.limit ?? DEFAULT_PAGE, ...(query.value.after !== undefined ? { after: query.value.after } : {}) })
    if (!page.ok) return deps.fail(ctx, apiError('invalid_parameter', page.error))
    ctx.body = { result_code: 0, recordings: page.value.recordings.map(viewOf), next: page.value.next ?? null }
  })

  router.get('/:id', (ctx) => {
    const domain = domainOf(ctx)
    if (domain === undefined) return
    const record = deps.recordings.get(domain.name, ctx.params['id'] ?? '')
    if (record === undefined) return deps.fail(ctx, notFound(ctx.params['id'] ?? ''))
    ctx.body = { result_code: 0, recording: viewOf(record) }
  })

  router.get('/:id/audio', async (ctx) => {
    const domain = domainOf(ctx)
    if (domain === undefined) return
    const id = ctx.params['id'] ?? ''
    const audio = await deps.recordings.audio(domain.name, id)
    if (audio === undefined) return deps.fail(ctx, notFound(id))
    // The file opened once (never through a link), its size taken from that open file: the
    // length announced is the length of what is sent, even if the file is deleted meanwhile.
    let handle
    try {
      handle = await open(audio.path, constants.O_RDONLY | constants.O_NOFOLLOW)
    } catch {
      return deps.fail(ctx, notFound(id))
    }
    const size = (await handle.stat()).size
    const range = rangeOf(typeof ctx.headers.range === 'string' ? ctx.headers.range : undefined, size)
    ctx.set('Accept-Ranges', 'bytes')
    if (range.kind === 'unsatisfiable') {
      await handle.close()
      ctx.set('Content-Range', `bytes */${size}`)
      return deps.fail(ctx, apiError('range_not_satisfiable', `Range: beyond the end of the audio (${size} bytes)`))
    }
    const [start, end] = range.kind === 'part' ? [range.start, range.end] : [0, size - 1]
    ctx.status = range.kind === 'part' ? 206 : 200
    if (range.kind === 'part') ctx.set('Content-Range', `bytes ${start}-${end}/${size}`)
    ctx.type = 'audio/wav'
    if (ctx.method === 'HEAD' || size === 0) {
      await handle.close()
      ctx.length = size === 0 ? 0 : end - start + 1
      return
    }
    ctx.body = handle.createReadStream({ start, end, autoClose: true })
    ctx.length = end - start + 1
  })

  router.delete('/:id', async (ctx) => {
    const domain = domainOf(ctx)
    if (domain === undefined) return
    const id = ctx.params['id'] ?? ''
    if (!(await deps.recordings.remove(domain.name, id))) return deps.fail(ctx, notFound(id))
    ctx.body = { result_code: 0 }
  })

  return router
}
