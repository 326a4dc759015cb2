/**
 * What the domain's calls were lately, for the live calls page (docs/ui.md) and any client with
 * the domain's token (docs/api.md "Finished calls and channel samples"):
 *
 * - `GET {prefix}/finished_calls` → `{result_code: 0, calls: [...]}`: the last 50 finished
 *   calls, newest first (channels/call-history.ts);
 * - `GET {prefix}/channel_samples` → `{result_code: 0, interval_ms, samples: [{at, live, limit}]}`:
 *   the live channels against the channel_limit over the last hour (channels/channel-samples.ts).
 *
 * Both read the daemon's memory only (nothing of FreeSWITCH, nothing of the journal): a restart
 * starts them empty. Paths of their own, not under `{prefix}/calls/`, whose `{uuid}` would take
 * any word.
 */
import Router from '@koa/router'
import type { Context } from 'koa'
import type { CallHistory, FinishedCall } from '../../channels/call-history.js'
import type { ChannelSamples } from '../../channels/channel-samples.js'
import type { Runtime } from '../../runtime/store.js'
import { domainOfRequest } from '../domain-route.js'
import type { ApiError } from '../errors.js'

export interface RecentCallsDeps {
  readonly prefix: string
  readonly runtime: () => Runtime
  readonly history: Pick<CallHistory, 'finished'>
  readonly samples: Pick<ChannelSamples, 'of' | 'intervalMs'>
  readonly fail: (ctx: Context, e: ApiError) => void
  readonly authenticated: (ctx: Context, domain: string) => void
}

/** A finished call as the API shows it: every key always present, null when not known. */
function finishedCallView(c: FinishedCall): Record<string, unknown> {
  return {
    id: c.id,
    request_id: c.requestId ?? null,
    operation: c.operation ?? null,
    parties: c.parties,
    outcome: c.outcome,
    started_at: c.startedAt,
    answered_at: c.answeredAt ?? null,
    ended_at: c.endedAt,
    duration_s: c.durationS,
    talk_s: c.talkS,
    hangup_cause: c.hangupCause ?? null,
    legs: c.legs,
  }
}

export function recentCallsRouter(deps: RecentCallsDeps): Router {
  const router = new Router({ prefix: deps.prefix })

  router.get('/finished_calls', (ctx) => {
    const domain = domainOfRequest(ctx, deps)
    if (domain === undefined) return
    ctx.body = { result_code: 0, calls: deps.history.finished(domain.name).map(finishedCallView) }
  })

  router.get('/channel_samples', (ctx) => {
    const domain = domainOfRequest(ctx, deps)
    if (domain === undefined) return
    ctx.body = { result_code: 0, interval_ms: deps.samples.intervalMs, samples: deps.samples.of(domain.name) }
  })

  return router
}
