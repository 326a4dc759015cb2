/** `<Redirect method>URL</Redirect>`: the document at the URL (comma list = fallbacks) replaces this one. */
import type { Redirect } from '../document/types.js'
import type { ElementModule } from './types.js'

export const redirect: ElementModule<Redirect> = {
  name: 'Redirect',
  async run(el, ctx) {
    const urls = ctx.value(el.url)
    if (!urls.ok) return urls.error
    const method = ctx.value(el.method)
    if (!method.ok) return method.error
    return ctx.loadDocument(urls.value, method.value)
  },
}
