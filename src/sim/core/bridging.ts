/**
 * Two legs bridged (switch_ivr_bridge.c): linking them with the variables of
 * test/fixtures/freeswitch/esl/18-uuid-bridge.txt and 19-originate-xml-default.txt, CHANNEL_BRIDGE
 * / UNBRIDGE (one event, on A), what happens to the other leg when one hangs up or leaves, what A
 * does after its bridge, and uuid_bridge with its two session states.
 *
 * It sits on the session thread and the channel life: it hangs legs up and asks them to park,
 * route or transfer; they reach back only through the `BridgeSteps` and `BridgedHangup` they
 * were given.
 */
import { Bridge, type Session } from '../model/session.js'
import { nowMicros } from '../model/events.js'
import { isTrue } from '../text/switch-true.js'
import type { ChannelTable } from './channel-table.js'
import type { ChannelLife } from './lifecycle.js'
import type { BridgeSteps, SessionThread } from './session-thread.js'
import type { BridgeOutcome } from './switch.js'

export class Bridging implements BridgeSteps {
  constructor(
    private readonly table: ChannelTable,
    private readonly life: ChannelLife,
    private readonly thread: SessionThread,
  ) {}

  /**
   * Links two legs as A (originator) and B (originatee), with the variables of
   * test/fixtures/freeswitch/esl/18-uuid-bridge.txt and 19-originate-xml-default.txt.
   */
  link(a: Session, b: Session, viaApp: boolean): Bridge {
    const bridge = new Bridge(a, b, viaApp)
    a.bridge = bridge
    b.bridge = bridge
    const now = nowMicros()
    a.times.bridged = now
    b.times.bridged = now
    a.other = { type: 'originatee', uuid: b.uuid, profile: { ...b.profile }, times: b.times }
    b.other = { type: 'originator', uuid: a.uuid, profile: { ...a.profile }, times: a.times }
    b.callUuid = a.uuid
    b.setVar('call_uuid', a.uuid)
    a.setVar('bridge_channel', b.name)
    a.setVar('bridge_uuid', b.uuid)
    a.setVar('signal_bond', b.uuid)
    b.setVar('bridge_channel', a.name)
    b.setVar('bridge_uuid', a.uuid)
    b.setVar('signal_bond', a.uuid)
    a.setVar('bridge_to', b.uuid)
    b.setVar('bridge_to', a.uuid)
    return bridge
  }

  fire(bridge: Bridge, name: 'CHANNEL_BRIDGE' | 'CHANNEL_UNBRIDGE'): void {
    this.table.fireChannel(name, bridge.a, [], [
      ['Bridge-A-Unique-ID', bridge.a.uuid],
      ['Bridge-B-Unique-ID', bridge.b.uuid],
    ])
    // CF_BRIDGED is set and cleared on both legs (switch_ivr_bridge.c): a recording armed with
    // RECORD_BRIDGE_REQ writes only in between (test/fixtures/freeswitch/esl/28-record-session-bridge.txt).
    for (const leg of [bridge.a, bridge.b]) for (const bug of leg.mediaBugs) bug.bridged(name === 'CHANNEL_BRIDGE')
  }

  private unbridgeVars(bridge: Bridge): void {
    const { a, b } = bridge
    for (const [me, them] of [
      [a, b],
      [b, a],
    ] as const) {
      me.setVar('bridge_to', undefined)
      me.setVar('last_bridge_to', them.uuid)
    }
    const bCause = b.hangupCause
    if (bCause !== undefined) {
      a.setVar('last_bridge_hangup_cause', bCause)
      const term = b.getVar('sip_term_status')
      if (term !== undefined) a.setVar('last_bridge_proto_specific_hangup_cause', `sip:${term}`)
      a.setVar('bridge_hangup_cause', bCause)
    }
    const aCause = a.hangupCause
    if (aCause !== undefined) b.setVar('last_bridge_hangup_cause', aCause)
  }

  /**
   * A bridged leg hangs up. B hangs up: one CHANNEL_UNBRIDGE on A, A's bridge ends
   * (test/fixtures/freeswitch/esl/19-originate-xml-default.txt). A hangs up: B is hung up
   * (NORMAL_CLEARING, send_bye), then the UNBRIDGE on A, and A's reporting waits for B's
   * destruction (test/fixtures/freeswitch/esl/18-uuid-bridge.txt).
   */
  hungUp(s: Session): void {
    const bridge = s.bridge
    if (bridge === undefined) return
    bridge.a.bridge = undefined
    bridge.b.bridge = undefined
    if (s === bridge.a) {
      this.life.hangup(bridge.b, 'NORMAL_CLEARING')
      this.unbridgeVars(bridge)
      this.fire(bridge, 'CHANNEL_UNBRIDGE')
      bridge.a.finalizeGate = bridge.b.destroyedPromise
      bridge.finish({ by: 'a', cause: s.hangupCause ?? 'NORMAL_CLEARING' })
    } else {
      this.unbridgeVars(bridge)
      this.fire(bridge, 'CHANNEL_UNBRIDGE')
      bridge.finish({ by: 'b', cause: s.hangupCause ?? 'NORMAL_CLEARING' })
    }
  }

  /**
   * A leg leaves its bridge without hanging up (transfer, a new uuid_bridge): when A leaves, B
   * (which has nothing else to run) is hung up; when B leaves, A goes on as after any bridge.
   */
  leave(s: Session): void {
    const bridge = s.bridge
    if (bridge === undefined) return
    bridge.a.bridge = undefined
    bridge.b.bridge = undefined
    this.unbridgeVars(bridge)
    this.fire(bridge, 'CHANNEL_UNBRIDGE')
    if (s === bridge.a) {
      bridge.finish({ by: 'a', cause: 'NORMAL_CLEARING' })
      this.life.hangup(bridge.b, 'NORMAL_CLEARING')
    } else {
      bridge.finish({ by: 'b', cause: 'NORMAL_CLEARING' })
    }
  }

  /**
   * After the bridge: hangup_after_bridge (the peer's cause), park_after_bridge,
   * transfer_after_bridge, else go on (switch_ivr_bridge.c, end of switch_ivr_multi_threaded_bridge).
   */
  after(a: Session, end: BridgeOutcome, hangupByDefault: boolean): void {
    // A transfer already decided what A does next (uuid_transfer -both).
    if (!a.up || a.next !== undefined) return
    if (isTrue(a.getVar('park_after_bridge'))) {
      this.thread.requestStep(a, { kind: 'park' })
      return
    }
    const xfer = a.getVar('transfer_after_bridge')
    if (xfer !== undefined) {
      const [dest, dp, ctx] = xfer.split(':')
      if (dest !== undefined && dest !== '') {
        this.thread.transfer(a, dest, dp, ctx)
        return
      }
    }
    if (hangupByDefault || isTrue(a.getVar('hangup_after_bridge'))) this.life.hangup(a, end.cause)
  }

  /**
   * uuid_bridge originator (CS_SOFT_EXECUTE): CHANNEL_BRIDGE on A, wait for the end
   * (test/fixtures/freeswitch/esl/18-uuid-bridge.txt).
   */
  async softBridge(a: Session, bridge: Bridge): Promise<void> {
    if (bridge.ended) return
    a.setState('CS_SOFT_EXECUTE', 3)
    this.fire(bridge, 'CHANNEL_BRIDGE')
    const end = await bridge.done
    // A uuid_bridge'd leg has no extension to go back to: it hangs up with its peer.
    if (end.by === 'b') this.after(a, end, true)
  }

  /** uuid_bridge originatee (CS_EXCHANGE_MEDIA) until the bridge ends. */
  async exchange(b: Session, bridge: Bridge): Promise<void> {
    if (bridge.ended) return
    b.setState('CS_EXCHANGE_MEDIA', 5)
    const end = await bridge.done
    if (end.by === 'a' && b.up && bridge.b === b) this.life.hangup(b, 'NORMAL_CLEARING')
  }

  /**
   * uuid_bridge (switch_ivr_uuid_bridge): one leg must be answered (it becomes the originator);
   * both stop what they do (CHANNEL_EXECUTE_COMPLETE of park on B then A, state number 8), then
   * one CHANNEL_BRIDGE on A (test/fixtures/freeswitch/esl/18-uuid-bridge.txt).
   */
  uuidBridge(aUuid: string, bUuid: string): boolean {
    let a = this.table.sessions.get(aUuid)
    let b = this.table.sessions.get(bUuid)
    if (a === undefined || b === undefined || a === b || !a.up || !b.up) return false
    if (!a.answered && !a.mediaUp) {
      if (!b.answered && !b.mediaUp) return false
      ;[a, b] = [b, a]
    }
    for (const s of [a, b]) if (s.bridge !== undefined) this.leave(s)
    a.setVar('uuid_bridge', b.uuid)
    a.setVar('original_destination_number', a.profile.destinationNumber)
    b.setVar('original_destination_number', b.profile.destinationNumber)
    const bridge = this.link(a, b, false)
    a.stateNumber = 8
    b.stateNumber = 8
    this.thread.requestStep(b, { kind: 'exchange', bridge })
    this.thread.requestStep(a, { kind: 'soft-bridge', bridge })
    return true
  }
}
