/** `<Redirect method>URL</Redirect>`: the document at the URL (comma list = fallbacks) replaces this one. */
import * as C from '../syntax/checks.js'
import type { ElementBase, HttpMethod, Param } from '../syntax/types.js'
import type { ElementModule } from './types.js'

export interface Redirect extends ElementBase {
  readonly type: 'Redirect'
  /** Default POST. */
  readonly method: Param<HttpMethod>
  readonly url: Param<readonly string[]>
}

declare module '../syntax/types.js' {
  interface IvrElementTypes {
    Redirect: Redirect
  }
}

export const redirect: ElementModule<Redirect> = {
  name: 'Redirect',
  attributes: ['method'],
  parse(node, ctx) {
    return {
      type: 'Redirect',
      pos: node.pos,
      method: ctx.attr(node, 'method', C.httpMethod, 'POST'),
      url: ctx.textValue(node, 'the URL of the next document', C.urlList),
    }
  },
  async run(el, ctx) {
    const urls = ctx.value(el.url)
    if (!urls.ok) return urls.error
    const method = ctx.value(el.method)
    if (!method.ok) return method.error
    return ctx.loadDocument(urls.value, method.value)
  },
}
