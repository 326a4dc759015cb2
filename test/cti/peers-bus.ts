/**
 * CTI harnesses linked as the boxes of a cluster, in memory: the CtiPeers seam (src/cti/peers.ts)
 * without Redis, so that what CTI does with peers' channels (the view, the frames, the policy,
 * commands handed to the owning node) is tested on its own. src/cluster/cti-view.ts is the real
 * seam; test/cluster/cti.test.ts runs it between processes on a real redis-server.
 */
import type { CtiPeers, LocalCti, RemoteChange, RemoteChannel } from '../../src/cti/peers.js'

interface Member {
  local: LocalCti | undefined
  onRemote: (c: RemoteChange) => void
  readonly remote: Map<string, RemoteChannel>
}

export class PeersBus {
  private readonly members = new Map<string, Member>()
  /** Commands handed from one node to another: [from... to, frame]. */
  readonly forwarded: Array<{ node: string; frame: string }> = []

  peers(node: string): CtiPeers {
    const me: Member = { local: undefined, onRemote: () => undefined, remote: new Map() }
    this.members.set(node, me)
    return {
      attach: (local, onRemote) => {
        me.local = local
        me.onRemote = onRemote
      },
      share: (ch, removed) => {
        for (const [other, m] of this.members) {
          if (other === node) continue
          const channel: RemoteChannel = { ...ch, parties: [...ch.parties], node }
          const before = m.remote.get(ch.uuid)
          if (removed) m.remote.delete(ch.uuid)
          else m.remote.set(ch.uuid, channel)
          if (removed && before === undefined) continue
          m.onRemote({ channel, removed, unchanged: !removed && before?.view === ch.view })
        }
      },
      channelsOf: (domain) => [...me.remote.values()].filter((c) => c.domain === domain),
      channel: (uuid) => me.remote.get(uuid),
      command: async (target, source, frame, unreachable) => {
        const local = this.members.get(target)?.local
        if (local === undefined) return unreachable(`node ${target} is gone`)
        this.forwarded.push({ node: target, frame })
        return local.command(source, frame)
      },
    }
  }
}
