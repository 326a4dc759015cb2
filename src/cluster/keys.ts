/**
 * The names of everything the nodes share in Redis (docs/cluster.md "What is shared"), in one
 * place so that the Lua scripts, the nodes and the tests agree. All under one prefix, so a Redis
 * may serve other things (or two clusters, with two prefixes).
 *
 * One Redis (or a Sentinel-managed primary), not Redis Cluster: the scripts read keys they find
 * while running (the lease of each node counted), which Redis Cluster's slot rules forbid.
 */
export interface ClusterKeys {
  /** A node's lease: exists while the node lives (SET PX, renewed every lease/3). */
  lease(node: string): string
  /** Prefix of every lease key: the scripts append a node id to it. */
  readonly leasePrefix: string
  /** Hash node id → its API's URL: every node that ever joined (the registry). */
  readonly nodes: string
  /** Hash node id → channels in use (live + reserved) of one domain on that node. */
  inUse(domain: string): string
  /** When this Redis first saw a node (ms): admissions wait one lease after it (a restarted, empty Redis). */
  readonly since: string
  /** Stream of a node's accepted requests, results and their ends (results.ts): what a peer takes over. */
  results(node: string): string
  /** Set of the request ids a peer took over from a node (takeover.ts): the node, back, delivers none of them. */
  claimed(node: string): string
  /** Prefix of the streams a claimer took (`<prefix><claimer>:<dead node>:<n>`), until it has handed them to its dispatcher. */
  taken(claimer: string): string
  /** Set of the taken streams a claimer has not handed over yet (read at its next round, e.g. after a crash). */
  takenBy(claimer: string): string
  /** Pub/sub channel of a domain's CTI channel changes, every node's (cti-view.ts). */
  ctiEvents(domain: string): string
  /** Pattern matching every domain's `ctiEvents` channel. */
  readonly ctiEventsPattern: string
  /** Pub/sub channel where a node says it rewrote its whole channel hash. */
  readonly ctiResets: string
  /** Hash uuid → channel message of one node's box's channels (and `~seq`: its run and last message). */
  ctiChannels(node: string): string
  /** Pub/sub channel of the CTI commands a node is asked to carry out (cti-commands.ts). */
  ctiCommands(node: string): string
  /** Pub/sub channel of the answers to the commands a node forwarded. */
  ctiReplies(node: string): string
}

export function clusterKeys(prefix = 'cod'): ClusterKeys {
  const leasePrefix = `${prefix}:lease:`
  return {
    lease: (node) => `${leasePrefix}${node}`,
    leasePrefix,
    nodes: `${prefix}:nodes`,
    inUse: (domain) => `${prefix}:inuse:${domain.toLowerCase()}`,
    since: `${prefix}:since`,
    results: (node) => `${prefix}:results:${node}`,
    claimed: (node) => `${prefix}:claimed:${node}`,
    taken: (claimer) => `${prefix}:taken:${claimer}:`,
    takenBy: (claimer) => `${prefix}:takenby:${claimer}`,
    ctiEvents: (domain) => `${prefix}:cti:${domain.toLowerCase()}`,
    ctiEventsPattern: `${prefix}:cti:*`,
    ctiResets: `${prefix}:ctireset`,
    ctiChannels: (node) => `${prefix}:ctichan:${node}`,
    ctiCommands: (node) => `${prefix}:cticmd:${node}`,
    ctiReplies: (node) => `${prefix}:ctireply:${node}`,
  }
}
