/**
 * Reading FreeSWITCH's channel headers: event times, the `cod_*` variables the daemon stamps,
 * and the domain a channel belongs to. Header names are those of the real captures
 * (Unique-ID, Call-Direction, Caller-*, Other-Leg-Unique-ID, Bridge-A/B-Unique-ID, Hangup-Cause,
 * Event-Date-Timestamp in microseconds, variable_*).
 */
import { CHANNEL_VARS } from '../pbx/channel-vars.js'
import { varHeader, type CodVariable } from '../pbx/event-headers.js'
import type { FsEvent } from '../pbx/types.js'
import type { ChannelDirectory } from './types.js'

/** The `cod_*` variables and the headers that carry them: read by name, never by walking all ~75 headers. */
export const COD_VAR_HEADERS: ReadonlyArray<readonly [CodVariable, `variable_${CodVariable}`]> = Object.values(CHANNEL_VARS).map((name) => [name, varHeader(name)])

export const nonEmpty = (s: string | undefined): string | undefined => (s === undefined || s === '' ? undefined : s)

/** Event-Date-Timestamp and Caller-Channel-*-Time are epoch microseconds; 0 means "not yet". */
export function microsToMs(s: string | undefined): number | undefined {
  if (s === undefined || !/^[0-9]{1,20}$/.test(s)) return undefined
  const n = Number(s)
  return n > 0 ? Math.floor(n / 1000) : undefined
}

/** The domain part of `user@domain`, `domain` or `host:port`, lower-cased. */
function domainPart(s: string | undefined): string | undefined {
  if (s === undefined || s === '') return undefined
  const at = s.lastIndexOf('@')
  const host = at >= 0 ? s.slice(at + 1) : s
  const colon = host.indexOf(':')
  const domain = (colon >= 0 ? host.slice(0, colon) : host).toLowerCase()
  return domain === '' ? undefined : domain
}

/** The user part of `user@domain`. */
export function userPart(s: string | undefined): string | undefined {
  if (s === undefined) return undefined
  const at = s.indexOf('@')
  return at > 0 ? s.slice(0, at) : undefined
}

/**
 * The lower-case name of the domain `candidate` names: with a directory, only a configured
 * domain (an IP host or a foreign domain places nothing); without one, any name.
 */
export function knownDomain(directory: ChannelDirectory | undefined, candidate: string | undefined): string | undefined {
  const d = domainPart(candidate)
  if (d === undefined || directory === undefined) return d
  return directory.domain(d)?.name.toLowerCase()
}

/** Headers that may name a channel's domain, most specific first. */
const DOMAIN_HEADERS = [varHeader('domain_name'), varHeader('dialed_domain'), varHeader('presence_id'), 'Channel-Presence-ID'] as const
const COD_DOMAIN = varHeader(CHANNEL_VARS.domain)
const SIP_TO_HOST = varHeader('sip_to_host')

/**
 * The domain an event places its channel in: `cod_domain` (ours, trusted as stamped), else the
 * SIP variables, else the domain of the leg it is connected to, else the SIP To host.
 */
export function domainOfEvent(ev: FsEvent, directory: ChannelDirectory | undefined, otherLegDomain: string | undefined): string | undefined {
  const stamped = nonEmpty(ev[COD_DOMAIN])
  if (stamped !== undefined) return stamped.toLowerCase()
  for (const header of DOMAIN_HEADERS) {
    const d = knownDomain(directory, nonEmpty(ev[header]))
    if (d !== undefined) return d
  }
  return otherLegDomain ?? knownDomain(directory, nonEmpty(ev[SIP_TO_HOST]))
}
