/**
 * The seam through which CTI shows the channels of the other boxes of a cluster (docs/cluster.md
 * "One CTI view"). CTI knows nothing of Redis or of nodes' addresses: the daemon hands it a
 * `CtiPeers` (src/cluster/cti-view.ts) only when daemon.yaml has a `cluster` section; without
 * one, CTI shows its own box's channels and nothing here is used.
 *
 * What travels between nodes is a channel as the hub needs it: its serialised view (the very
 * bytes subscribers get, view.ts viewOf, serialised once by the node that owns the channel) and
 * what decides who may see it and act on it (its domain, its party users, its own user: the same
 * inputs as view.ts isVisible and policy.ts mayActOn). A command on a peer's channel is carried
 * out by that peer (its own Control, on its own record: the same checks, replies and error ids);
 * its answer comes back as the result frame the peer built.
 */
import type { CommandSource } from './policy.js'

export type { CommandSource, Credential } from './policy.js'

/** One channel as the nodes share it. */
export interface SharedChannel {
  readonly uuid: string
  /** Lower-case domain (channels without one are not shared: no subscriber may see them). */
  readonly domain: string
  /** Users party to the channel (ChannelRecord.parties): who of the user-scoped subscribers see it. */
  readonly parties: readonly string[]
  /** The channel's own user (ChannelRecord.userId): what a ticket may act on (policy.ts mayActOn). */
  readonly userId: string | undefined
  /** JSON of its ChannelView (protocol.ts), as the owning node serialised it. */
  readonly view: string
}

/** A channel of another node's box. */
export interface RemoteChannel extends SharedChannel {
  /** The node that owns it: commands go there. */
  readonly node: string
}

/** A peer's channel appeared, changed or went (ended, its node died, or this node lost Redis). */
export interface RemoteChange {
  readonly channel: RemoteChannel
  readonly removed: boolean
  /** Its view is the one delivered last (only its parties changed): news only to new watchers. */
  readonly unchanged: boolean
}

/** What CTI gives the seam: this node's channels, and the running of commands that peers forward. */
export interface LocalCti {
  /** Every channel of this node's box that has a domain, as shared (for a full republication). */
  channels(): Iterable<SharedChannel>
  /** Runs a command a peer forwarded, on this node's channels only; resolves with the result frame. */
  command(source: CommandSource, frame: string): Promise<string>
}

export interface CtiPeers {
  /** Binds CTI once: `onRemote` hears every change of the peers' channels, in order per channel. */
  attach(local: LocalCti, onRemote: (change: RemoteChange) => void): void
  /** A change of this node's channel, for the peers (`removed`: the channel is gone). */
  share(channel: SharedChannel, removed: boolean): void
  /** The peers' channels of a domain now (a new subscriber's initial_info). */
  channelsOf(domain: string): Iterable<RemoteChannel>
  /** A peer's channel by uuid. */
  channel(uuid: string): RemoteChannel | undefined
  /**
   * Has the owning node run a command (the client's frame as parsed) for this source; resolves
   * with the result frame to send back: the node's own, or a `cluster_unavailable` one built
   * by `unreachable` when the node cannot be reached.
   */
  command(node: string, source: CommandSource, frame: string, unreachable: (description: string) => string): Promise<string>
}
