/**
 * `GET {prefix}/openapi.json` (no authentication): the document of document.ts, built once when
 * the app is made (the prefix is read once, like the API's own) and served as the same bytes.
 */
import Router from '@koa/router'
import { buildOpenApiDocument } from './document.js'

export function openApiRouter(prefix: string): Router {
  const body = JSON.stringify(buildOpenApiDocument({ prefix }))
  const router = new Router()
  router.get(`${prefix}/openapi.json`, (ctx) => {
    ctx.type = 'application/json'
    ctx.body = body
  })
  return router
}
