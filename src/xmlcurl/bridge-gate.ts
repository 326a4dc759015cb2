/**
 * The dialplan's side of the channel limit (docs/engine.md "Channel limit"): before the daemon's
 * dialplan hands FreeSWITCH a bridge for a leg of an API request, the origination engine says
 * whether the request still holds the channels for the legs that bridge creates. Its own
 * interface, implemented by the engine and wired by the daemon, so that xmlcurl depends on no
 * engine module. It is synchronous: FreeSWITCH's thread waits on the fetch (fetch.ts).
 */

export interface BridgeGate {
  /**
   * True when the request's destination legs may be created now: it holds them since its
   * admission, or (a request the engine does not know, e.g. placed before a restart) a fresh
   * hold fits under the domain's channel_limit. `callerUuid` is the answered leg asking.
   */
  mayBridge(domain: string, requestId: string, callerUuid: string | undefined): boolean
}

/**
 * The cause a refused bridge hangs the caller up with: Q.850 34, "no circuit/channel available"
 * (SWITCH_CAUSE_NORMAL_CIRCUIT_CONGESTION in FreeSWITCH's switch_types.h).
 */
export const LIMIT_CAUSE = 'NORMAL_CIRCUIT_CONGESTION'
