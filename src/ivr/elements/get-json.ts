/**
 * `<GetJSON var url method>`: fetches JSON (call parameters sent as with documents; a comma list
 * is tried in order) into `var`. Any failure (fetch, status, size, not JSON) gives null, never
 * an error: documents test the variable.
 */
import * as C from '../syntax/checks.js'
import type { ElementBase, HttpMethod, Param } from '../syntax/types.js'
import { isPlainObject, type Value } from '../expr/value.js'
import { GONE, NEXT, type ElementModule } from './types.js'

export interface GetJSON extends ElementBase {
  readonly type: 'GetJSON'
  readonly var: string
  /** One URL or a comma list tried in order. */
  readonly url: Param<readonly string[]>
  /** Default POST. */
  readonly method: Param<HttpMethod>
}

declare module '../syntax/types.js' {
  interface IvrElementTypes {
    GetJSON: GetJSON
  }
}

/**
 * JSON.parse output as an expression value: it already is plain data (null, booleans, numbers,
 * strings, arrays, plain objects); anything else (a fetcher that is not JSON.parse) becomes null.
 */
function jsonValue(v: unknown): Value {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return v
  if (typeof v === 'number') return Number.isFinite(v) ? v : null
  if (Array.isArray(v)) return v.map(jsonValue)
  if (isPlainObject(v)) {
    const out: { [key: string]: Value } = {}
    // defineProperty: a plain assignment of "__proto__" would set the prototype, not a key.
    for (const [k, x] of Object.entries(v)) Object.defineProperty(out, k, { value: jsonValue(x), enumerable: true, writable: true, configurable: true })
    return out
  }
  return null
}

export const getJson: ElementModule<GetJSON> = {
  name: 'GetJSON',
  attributes: ['var', 'url', 'method'],
  parse(node, ctx) {
    ctx.empty(node)
    return {
      type: 'GetJSON',
      pos: node.pos,
      var: ctx.varName(node),
      url: ctx.requiredAttr(node, 'url', C.urlList),
      method: ctx.attr(node, 'method', C.httpMethod, 'POST'),
    }
  },
  async run(el, ctx) {
    const urls = ctx.value(el.url)
    const method = ctx.value(el.method)
    let value: Value = null
    if (urls.ok && method.ok) {
      for (const url of urls.value) {
        const r = await ctx.fetchJson(url, method.value)
        if (ctx.signal.aborted) return GONE
        if (r.ok) {
          value = jsonValue(r.value)
          break
        }
        ctx.log.info({ url, reason: r.error }, 'ivr GetJSON: fetch failed')
      }
    } else {
      ctx.log.info({ reason: !urls.ok ? urls.error : method.ok ? '' : method.error }, 'ivr GetJSON: bad attribute value, variable set to null')
    }
    ctx.setVariable(el.var, value)
    return NEXT
  },
}
