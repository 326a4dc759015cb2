/**
 * The channel limit's say on an IVR `<Transfer>` (docs/engine.md "Channel limit"). A Transfer runs
 * the route's bridge on the IVR's channel itself (elements/transfer.ts), not through the daemon's
 * dialplan, so the dialplan's check (xmlcurl/bridge-gate.ts) never sees it. The request's
 * destination hold was counted at admission as one leg (an IVR creates none until it transfers);
 * a Transfer to a user with three terminals, or to a group, may create more. Before bridging, the
 * session asks the origination engine to widen the hold to what the route rings; the bridge runs
 * only if that fits under the domain's channel_limit.
 *
 * Its own interface, implemented by the engine and wired by the daemon, so that the IVR depends on
 * no engine module (the engine's plans already name IVR sources: an import the other way would be
 * a circle).
 */
import type { Group, User } from '../directory/directory.js'

/** What a Transfer rings, as the limit counts it (the directory's records, resolved by the Transfer). */
export type TransferTarget =
  /** Every registered terminal of the user, rung together. */
  | { readonly kind: 'user'; readonly user: User }
  /** Its members one after another: the most terminals any member has. */
  | { readonly kind: 'group'; readonly group: Group }
  /** One leg through the gateway. */
  | { readonly kind: 'pstn'; readonly number: string }

export interface TransferGate {
  /**
   * True when the request `requestId` (the IVR leg's `cod_request_id`) holds, or could now take,
   * channels for every leg the transfer rings; false when they would exceed the domain's limit or
   * could not be counted (the switch did not answer the contact lookup). `callerUuid` is the IVR's
   * channel: the hold lasts while it lives.
   */
  mayTransfer(domain: string, requestId: string, callerUuid: string, target: TransferTarget): Promise<boolean>
}
