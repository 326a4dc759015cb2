/**
 * The Lua scripts of the cluster (docs/cluster.md "The channel limit across nodes"). Redis runs a
 * script to its end before any other command, so a check and the write that follows it are one
 * atomic step across every node, as `ChannelLimiter.tryReserve` is one synchronous step inside a
 * node (src/origination/channel-limit.ts).
 *
 * Time is Redis's own (TIME), never a node's clock: nodes' clocks may differ.
 */
import { createHash } from 'node:crypto'
import type { Redis } from 'ioredis'

export interface LuaScript {
  readonly source: string
  readonly sha: string
}

const script = (source: string): LuaScript => ({ source, sha: createHash('sha1').update(source).digest('hex') })

/** Milliseconds of Redis's clock. */
const NOW = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`

/**
 * A node renews its lease, its registry entry and its in-use counts in one step.
 * KEYS: lease, nodes, since, then one in-use hash per domain.
 * ARGV: node id, api url, lease ms, then one count per in-use hash (same order).
 * `since` is set by the first node an empty Redis sees (first start, or a restart without data).
 */
export const RENEW = script(`${NOW}
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
if redis.call('EXISTS', KEYS[3]) == 0 then redis.call('SET', KEYS[3], now) end
for i = 4, #KEYS do
  redis.call('HSET', KEYS[i], ARGV[1], ARGV[i])
end
return 1`)

/**
 * Admission across nodes. KEYS: the domain's in-use hash, since, this node's lease.
 * ARGV: node id, this node's in use now (with the request's channels, reserved locally just
 * before), the request's channels, the domain's limit, lease key prefix, warm-up ms.
 *
 * Sums this node's count and the counts of every node whose lease is alive (a dead node's count is
 * removed); admits when the sum is within the limit, writing this node's count; otherwise writes
 * the count without the request's channels. Returns {1, total} admitted, {0, total} refused,
 * {-1, reason} unavailable: this node's lease is gone (it must renew first), or Redis came up
 * empty less than a lease ago (the other nodes have not all republished their counts yet).
 */
export const ADMIT = script(`${NOW}
local since = redis.call('GET', KEYS[2])
if not since then
  redis.call('SET', KEYS[2], now)
  return {-1, 'warming'}
end
if now - tonumber(since) < tonumber(ARGV[6]) then return {-1, 'warming'} end
if redis.call('EXISTS', KEYS[3]) == 0 then return {-1, 'no_lease'} end
local total = tonumber(ARGV[2])
local counts = redis.call('HGETALL', KEYS[1])
for i = 1, #counts, 2 do
  local node = counts[i]
  if node ~= ARGV[1] then
    if redis.call('EXISTS', ARGV[5] .. node) == 1 then
      total = total + tonumber(counts[i + 1])
    else
      redis.call('HDEL', KEYS[1], node)
    end
  end
end
if total <= tonumber(ARGV[4]) then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
  return {1, total}
end
redis.call('HSET', KEYS[1], ARGV[1], tonumber(ARGV[2]) - tonumber(ARGV[3]))
return {0, total}`)

/** Runs a script by its digest, loading it the first time (or after a Redis restart forgot it). */
export async function runScript(redis: Redis, s: LuaScript, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
  try {
    return await redis.evalsha(s.sha, keys.length, ...keys, ...args)
  } catch (e) {
    if (!(e instanceof Error) || !e.message.startsWith('NOSCRIPT')) throw e
    return redis.eval(s.source, keys.length, ...keys, ...args)
  }
}

/**
 * A peer takes over a dead node's results stream, atomically: one claimer only, and only while
 * the node's lease is gone. KEYS: the node's lease, its results stream, its claimed set, the key
 * the stream is renamed to, the claimer's set of taken keys. ARGV: the claimed set's lifetime (ms).
 * The stream is renamed away (the node, back, starts a new one) and every request id it named is
 * added to the claimed set, so the node, back, delivers none of them. Returns 1 taken, 0 not.
 */
export const CLAIM = script(`if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
if redis.call('EXISTS', KEYS[2]) == 0 then return 0 end
redis.call('RENAME', KEYS[2], KEYS[4])
redis.call('SADD', KEYS[5], KEYS[4])
local entries = redis.call('XRANGE', KEYS[4], '-', '+')
for _, e in ipairs(entries) do
  local f = e[2]
  for i = 1, #f, 2 do
    if f[i] == 'rid' then redis.call('SADD', KEYS[3], f[i + 1]) end
  end
end
redis.call('PEXPIRE', KEYS[3], ARGV[1])
return 1`)

/**
 * A dead node's CTI channels leave Redis (cti-view.ts), only while its lease is gone: a node that
 * is back has renewed its lease before it rewrites its hash. KEYS: the node's lease, its CTI
 * channel hash. Returns 1 when the node is dead (hash deleted), 0 when it is alive.
 */
export const DROP_CTI_CHANNELS = script(`if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('DEL', KEYS[2])
return 1`)
