/**
 * Several nodes of a cluster on one machine for the cluster suite (docs/cluster.md): each node is
 * the fault suite's production-like pair (test/faults/harness/stack.ts: the standalone simulator
 * in a process of its own, the daemon in another, an independent ESL observer), its daemon.yaml
 * given a `cluster` section naming one shared redis-server. Killing a node's two processes
 * (SIGKILL) is a box dying.
 *
 * `LiveSum` adds the observers' live channels up at every change any of them sees: the cluster's
 * live channels, counted by nobody's code but the test's.
 */
import type { Test } from 'tap'
import { editYaml, faultStack, type FaultStack, type StackOptions } from '../faults/harness/stack.js'
import type { EslObserver } from '../faults/harness/observer.js'

export interface ClusterNodeStack {
  readonly id: string
  readonly stack: FaultStack
}

export interface NodeOptions extends StackOptions {
  readonly leaseMs: number
  /** One node's domain file differs (a user registered on one box only). */
  readonly domainEditFor?: (id: string, doc: Record<string, unknown>) => void
}

export async function startNodes(t: Test, redisUrl: string, ids: readonly string[], opts: NodeOptions): Promise<ClusterNodeStack[]> {
  const stacks = await Promise.all(
    ids.map(async (id) => {
      const stack = await faultStack(t, {
        ...opts,
        domainEdit: (doc) => {
          opts.domainEdit?.(doc)
          opts.domainEditFor?.(id, doc)
        },
      })
      editYaml(stack.configFile, (doc) => {
        doc.cluster = { redis: redisUrl, node_id: id, lease_ms: opts.leaseMs }
      })
      return { id, stack }
    }),
  )
  await Promise.all(stacks.map((n) => n.stack.startSim()))
  // Daemons one after the other: each compiles the sources (tsx) at start, and three at once on a
  // loaded 2-core machine can each take longer than the harness's 30 s wait.
  for (const n of stacks) await n.stack.startDaemon()
  return stacks
}

/** Kills a node as a box dies: its daemon and its switch, SIGKILL, at once. */
export async function killNode(n: ClusterNodeStack): Promise<void> {
  await Promise.all([n.stack.daemon?.kill(), n.stack.sim?.kill()])
}

/** The live channels of every node's switch, summed at every change, and the peak of that sum. */
export class LiveSum {
  peak = 0
  constructor(private readonly observers: readonly EslObserver[]) {
    for (const o of observers) {
      const live = o.live
      const set = live.set.bind(live)
      live.set = (k, v) => {
        const r = set(k, v)
        this.peak = Math.max(this.peak, this.now())
        return r
      }
    }
  }

  now(): number {
    return this.observers.reduce((n, o) => n + o.live.size, 0)
  }
}
