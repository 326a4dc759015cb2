/**
 * Reads an API request body: `Content-Type: application/json` only (charset utf-8 if any),
 * at most `http.body_limit` bytes, and a JSON object. koa-bodyparser does the reading; its
 * thrown errors (raw-body's 413/415, co-body's 400) become our error values here.
 */
import bodyParser from 'koa-bodyparser'
import type { Context, Middleware } from 'koa'
import { apiError, type ApiError } from './errors.js'
import { err, ok, type Result } from '../util/result.js'

const UNSUPPORTED = apiError('unsupported_media_type', 'the request body must be JSON sent with Content-Type: application/json')

/** `application/json`, optionally with `charset=utf-8`; nothing else (no +json variants, no forms). */
export function isJsonContentType(header: string | undefined): boolean {
  if (header === undefined) return false
  const [type, ...params] = header.split(';').map((s) => s.trim().toLowerCase())
  if (type !== 'application/json') return false
  return params.every((p) => p === '' || /^charset="?utf-?8"?$/.test(p))
}

const statusOfThrown = (e: unknown): number | undefined => {
  if (typeof e !== 'object' || e === null) return undefined
  const s: unknown = (e as { status?: unknown }).status ?? (e as { statusCode?: unknown }).statusCode
  return typeof s === 'number' ? s : undefined
}

export type BodyReader = (ctx: Context, limitBytes: number) => Promise<Result<unknown, ApiError>>

/** A reader; parsers are kept per limit because a reload (SIGHUP) may change the limit. */
export function createBodyReader(): BodyReader {
  const parsers = new Map<number, Middleware>()
  const parserFor = (limit: number): Middleware => {
    let p = parsers.get(limit)
    if (p === undefined) {
      // strict: co-body refuses JSON whose top level is not an object or array.
      p = bodyParser({ enableTypes: ['json'], jsonLimit: String(limit), strict: true })
      parsers.set(limit, p)
    }
    return p
  }

  return async (ctx, limit) => {
    if (!isJsonContentType(ctx.get('content-type') || undefined)) return err(UNSUPPORTED)
    try {
      await parserFor(limit)(ctx, async () => {})
    } catch (e) {
      const status = statusOfThrown(e)
      if (status === 413) return err(apiError('payload_too_large', `the request body is larger than ${limit} bytes`))
      if (status === 415) return err(UNSUPPORTED)
      if (status !== undefined && status >= 400 && status < 500) {
        return err(apiError('invalid_parameter', 'the request body is not valid JSON'))
      }
      throw e
    }
    const body: unknown = ctx.request.body
    if (ctx.request.rawBody === '' || typeof body !== 'object' || body === null || Array.isArray(body)) {
      return err(apiError('invalid_parameter', 'the request body must be a JSON object'))
    }
    return ok(body)
  }
}
