/** Shared fixtures of the origination tests: a directory, plans, a recording callback sink. */
import { randomUUID } from 'node:crypto'
import { daemonSchema, domainSchema, type DomainConfig } from '../../src/config/schema.js'
import { runtimeOf, type Runtime } from '../../src/runtime/store.js'
import type { CallbackSink, CallResult } from '../../src/origination/outcome.js'
import type { Destination, OriginationPlan, Originator } from '../../src/origination/plan.js'

export const DOMAIN = 'example.test'

export function domainConfig(over: Record<string, unknown> = {}): DomainConfig {
  return domainSchema.parse({
    name: DOMAIN,
    api_tokens: ['plain-token-for-tests-0001'],
    channel_limit: 20,
    gateway: 'pstn',
    calling_numbers: ['0501230000'],
    users: [
      { id: '1', name: 'alice', extension: '1001', password: 'secret-1', sim: { terminals: [{ answer_after: 1 }, { behaviour: 'no_answer' }] } },
      { id: '2', name: 'bob', extension: '1002', password: 'secret-2', sim: { terminals: [{ answer_after: 1 }] } },
      { id: '3', name: 'carol', extension: '1003', password: 'secret-3', sim: { terminals: [{ behaviour: 'busy' }] } },
      { id: '4', name: 'dave', extension: '1004', password: 'secret-4', sim: { terminals: [{ behaviour: 'unregistered' }] } },
      { id: '5', name: 'erin', extension: '1005', password: 'secret-5', sim: { terminals: [{ behaviour: 'no_answer' }] } },
      { id: '6', name: 'frank', extension: '1006', password: 'secret-6', sim: { terminals: [{ behaviour: 'reject' }] } },
    ],
    groups: [
      { id: '10', name: 'sales', type: 'CALL_CENTER', extension: '2001', members: ['carol', 'alice', 'bob'], answer_timeout: 60, member_answer_timeout: 15 },
    ],
    sim: { pstn: { default: { answer_after: 1 }, '0311112222': { behaviour: 'busy' }, '0322223333': { behaviour: 'no_answer' } } },
    ...over,
  })
}

export function runtimeWith(domains: DomainConfig[]): Runtime {
  return runtimeOf({
    file: 'test.yaml',
    daemon: daemonSchema.parse({ freeswitch: { mode: 'simulator' }, xml_curl: { username: 'freeswitch', password: 'xml-curl-secret' } }),
    domains,
  })
}

export function userOf(rt: Runtime, name: string) {
  const u = rt.directory.domain(DOMAIN)?.userByName(name)
  if (u === undefined) throw new Error(`no user ${name}`)
  return u
}

export function groupOf(rt: Runtime, name: string) {
  const g = rt.directory.domain(DOMAIN)?.groupsBy('group_name', name)[0]
  if (g === undefined) throw new Error(`no group ${name}`)
  return g
}

export function plan(originator: Originator, over: Partial<OriginationPlan> = {}): OriginationPlan {
  const destination: Destination = { kind: 'pstn', number: '0399998888' }
  return {
    requestId: randomUUID(),
    domain: DOMAIN,
    operation: originator.kind === 'group' ? 'call_group' : originator.kind === 'pstn' ? 'call_external' : 'call_user',
    originator,
    destination,
    answerTimeoutSec: 30,
    callbackUrl: 'http://127.0.0.1:9/cb',
    ...over,
  }
}

export class RecordingSink implements CallbackSink {
  readonly results: Array<{ domain: string; url: string; result: CallResult; requestId: string }> = []
  private waiters: Array<() => void> = []

  deliver(domain: string, url: string, result: CallResult, meta: { requestId: string }): void {
    this.results.push({ domain, url, result, requestId: meta.requestId })
    for (const w of this.waiters.splice(0)) w()
  }

  of(requestId: string) {
    return this.results.filter((r) => r.requestId === requestId)
  }

  /** Resolves once `requestId` has a result (or rejects after `ms`). */
  async waitFor(requestId: string, ms = 5000): Promise<CallResult> {
    const deadline = Date.now() + ms
    for (;;) {
      const found = this.of(requestId)[0]
      if (found !== undefined) return found.result
      const left = deadline - Date.now()
      if (left <= 0) throw new Error(`no callback for ${requestId}`)
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left)
        this.waiters.push(() => {
          clearTimeout(timer)
          resolve()
        })
      })
    }
  }
}
