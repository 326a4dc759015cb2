/**
 * `GET /metrics` on the API listener, beside /healthz and outside the API prefix: the path
 * Prometheus scrapes by default, on the listener that load balancers already reach, without
 * authentication like /healthz (docs/operations.md says why, and what to do when the API
 * listener is reachable from untrusted networks). The families hold no UUID, number or token.
 */
import Router from '@koa/router'
import type { Registry } from 'prom-client'

export const METRICS_PATH = '/metrics'

export function metricsRouter(metrics: { readonly registry: Registry; render(): Promise<string> }): Router {
  const router = new Router()
  router.get(METRICS_PATH, async (ctx) => {
    ctx.set('Cache-Control', 'no-store')
    ctx.type = metrics.registry.contentType
    ctx.body = await metrics.render()
  })
  return router
}
