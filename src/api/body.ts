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
function isJsonContentType(header: string | undefined): boolean {
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
    const bytes = keepBytes(ctx, limit)
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
    const raw = ctx.request.rawBody
    if (!isWellFormedUtf8(typeof raw === 'string' ? raw : undefined, bytes)) return err(apiError('invalid_parameter', 'the request body is not valid UTF-8'))
    const body: unknown = ctx.request.body
    if (ctx.request.rawBody === '' || typeof body !== 'object' || body === null || Array.isArray(body)) {
      return err(apiError('invalid_parameter', 'the request body must be a JSON object'))
    }
    return ok(body)
  }
}

/**
 * The bytes of the body as they arrive, beside koa-bodyparser's own reading (its listener is
 * attached in the same tick, before the stream flows), so that invalid UTF-8 can be told from a
 * real U+FFFD: the parser's decoder replaces invalid sequences with U+FFFD silently, and strict
 * text (schema/text.ts) means a value is refused, never repaired. Kept only up to the limit, and
 * only for a body that is not compressed (then the bytes are not the text).
 */
function keepBytes(ctx: Context, limit: number): Buffer[] | undefined {
  const encoding = (ctx.get('content-encoding') || 'identity').toLowerCase()
  if (encoding !== 'identity') return undefined
  const chunks: Buffer[] = []
  let size = 0
  ctx.req.on('data', (chunk: Buffer) => {
    size += chunk.length
    if (size <= limit) chunks.push(chunk)
  })
  return chunks
}

/** Whether the decoded body came from valid UTF-8: only a U+FFFD can hide a replacement. */
function isWellFormedUtf8(text: string | undefined, bytes: Buffer[] | undefined): boolean {
  if (text === undefined || !text.includes('\uFFFD') || bytes === undefined) return true
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(bytes))
    return true
  } catch {
    return false
  }
}
