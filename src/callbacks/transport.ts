/**
 * The callbacks' outbound transport: the daemon's one transport (src/net/transport.ts) with
 * the callbacks' allow-list, `callbacks.allow`. A callback_url is chosen by the API client, so
 * its host is untrusted: loopback, private, link-local, metadata... addresses are refused
 * unless the operator allowed them. The list is read from the settings at each connection, so
 * a reload (SIGHUP) applies to the next one.
 */
import { allowListOf } from '../net/allow-list.js'
import type { Resolver } from '../net/policy.js'
import { createTransport, type OutboundTransport } from '../net/transport.js'
import type { CallbackSettings } from './types.js'

const NONE: readonly string[] = []

/** `resolver`: host name to addresses; default the system resolver (tests inject one). */
export const createCallbackTransport = (settings: () => CallbackSettings, resolver?: Resolver): OutboundTransport =>
  createTransport({ allow: () => allowListOf(settings().allow ?? NONE), setting: 'callbacks.allow', ...(resolver !== undefined ? { resolver } : {}) })
