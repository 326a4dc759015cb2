/**
 * The one Redis connection of a node (ioredis). Commands fail at once while Redis is unreachable
 * (no offline queue) and after `COMMAND_TIMEOUT_MS` when it does not answer: an admission must be
 * refused (503) rather than wait or be counted late (docs/cluster.md "Failures"). ioredis
 * reconnects by itself; `onReady` hears each (re)connection so the node republishes at once.
 */
import { Redis } from 'ioredis'
import type { Logger } from '../util/logger.js'

/** An admission waits this long for Redis at most; then it is refused with 503. */
const COMMAND_TIMEOUT_MS = 1000
/** Reconnection attempts are spaced 100 ms, 200 ms, ... up to this. */
const MAX_RECONNECT_DELAY_MS = 1000

export interface ClusterConnection {
  readonly redis: Redis
  isReady(): boolean
  /** Called at every (re)connection, once Redis accepts commands. */
  onReady(listener: () => void): void
  close(): Promise<void>
}

export function connectRedis(url: string, logger: Logger): ClusterConnection {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: COMMAND_TIMEOUT_MS,
    connectTimeout: 2000,
    retryStrategy: (times) => Math.min(times * 100, MAX_RECONNECT_DELAY_MS),
    // Only the script digests of src/cluster/scripts.ts; ioredis's own INFO check at connect is enough.
    enableReadyCheck: true,
  })
  let ready = false
  let down = false
  const listeners: (() => void)[] = []
  redis.on('ready', () => {
    ready = true
    if (down) logger.info('Redis reachable again')
    down = false
    for (const l of listeners) l()
  })
  redis.on('close', () => {
    ready = false
  })
  redis.on('error', (e: Error) => {
    // Logged once per outage: ioredis retries every second and would repeat it.
    if (!down) logger.warn({ err: e.message }, 'Redis unreachable: admissions are refused (503) until it is back')
    down = true
  })
  return {
    redis,
    isReady: () => ready,
    onReady: (l) => void listeners.push(l),
    async close() {
      ready = false
      try {
        await redis.quit()
      } catch {
        redis.disconnect()
      }
    },
  }
}
