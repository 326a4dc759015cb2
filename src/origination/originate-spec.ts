/**
 * From a plan to the originate FreeSWITCH gets (pure): the channel variables every leg carries
 * (pbx/channel-vars.ts: request, domain, operation, role, destination, group context,
 * end_user, auto-answer), caller id, and the route the answered leg runs
 * (`cod_route XML <domain>`: the daemon's dialplan connects it to the destination), and what
 * FreeSWITCH does on the answer itself (the time limit, DTMF to send).
 */
import type { DomainDirectory, Group } from '../directory/directory.js'
import { CHANNEL_VARS, ROUTE_EXTENSION } from '../pbx/channel-vars.js'
import * as commands from '../pbx/commands.js'
import type { Endpoint, OnAnswer, OriginateLeg } from '../pbx/commands.js'
import type { EndUser } from '../pbx/end-user.js'
import { legRecordSlot } from '../pbx/leg-record.js'
import type { OriginationPlan } from './plan.js'

/** One leg of an attempt: its pre-assigned UUID and where it rings. */
export interface LegPlan {
  readonly uuid: string
  readonly endpoint: Endpoint
  readonly userId?: string
  readonly autoAnswer?: boolean
}

const destinationVars = (plan: OriginationPlan): Record<string, string> => {
  const d = plan.destination
  switch (d.kind) {
    case 'user':
      return { [CHANNEL_VARS.destKind]: 'user', [CHANNEL_VARS.destValue]: d.user.id }
    case 'group':
      return { [CHANNEL_VARS.destKind]: 'group', [CHANNEL_VARS.destValue]: d.group.id }
    case 'extension':
      return { [CHANNEL_VARS.destKind]: 'extension', [CHANNEL_VARS.destValue]: d.extension.number }
    case 'pstn':
      return {
        [CHANNEL_VARS.destKind]: 'pstn',
        [CHANNEL_VARS.destValue]: d.number,
        ...(d.callingNumber !== undefined ? { [CHANNEL_VARS.destCallingNumber]: d.callingNumber } : {}),
      }
    case 'ivr':
      return { [CHANNEL_VARS.destKind]: 'ivr', [CHANNEL_VARS.destValue]: plan.requestId }
  }
}

const endUserOf = (plan: OriginationPlan): EndUser | undefined => {
  if (plan.endUser !== undefined) return plan.endUser
  if (plan.destination.kind === 'pstn' && plan.destination.endUser !== undefined) return plan.destination.endUser
  if (plan.originator.kind === 'pstn') return plan.originator.endUser
  return undefined
}

/** The number shown on the originating leg (docs/engine.md "Caller id"). */
const callerIdNumberOf = (plan: OriginationPlan, dom: DomainDirectory): string | undefined => {
  const o = plan.originator
  if (o.kind === 'pstn') return o.callingNumber ?? dom.config.calling_numbers[0]
  // A phone ringing for a click-to-call shows whom it will be connected to.
  const d = plan.destination
  const n =
    d.kind === 'pstn' ? d.number : d.kind === 'user' ? d.user.extension : d.kind === 'group' ? d.group.extension : d.kind === 'extension' ? d.extension.number : undefined
  return n !== undefined && commands.PATTERNS.number.test(n) ? n : undefined
}

/**
 * What FreeSWITCH does itself when the originating leg answers (pbx/commands.ts OnAnswer): hang it
 * up after the plan's time limit, send its DTMF. Set on every leg of the attempt: only the one
 * that answers runs them (the others never answer).
 */
const onAnswerOf = (plan: OriginationPlan): { onAnswer?: OnAnswer } =>
  plan.timeLimitSec === undefined && plan.sendDigits === undefined
    ? {}
    : {
        onAnswer: {
          ...(plan.timeLimitSec !== undefined ? { hangupAfterSec: plan.timeLimitSec } : {}),
          ...(plan.sendDigits !== undefined ? { sendDigits: plan.sendDigits } : {}),
        },
      }

export const groupOf = (plan: OriginationPlan): Group | undefined =>
  plan.originator.kind === 'group' ? plan.originator.group : plan.groupContext

/** The originate of one attempt: the legs of `legs` rung together for `timeoutSec`, then the route. */
export const buildOriginate = (
  plan: OriginationPlan,
  domainName: string,
  dom: DomainDirectory | undefined,
  legs: readonly LegPlan[],
  timeoutSec: number,
) => {
  const vars: Record<string, string> = {
    [CHANNEL_VARS.requestId]: plan.requestId,
    [CHANNEL_VARS.domain]: domainName,
    [CHANNEL_VARS.operation]: plan.operation,
    [CHANNEL_VARS.role]: 'originator',
    ...destinationVars(plan),
  }
  const group = groupOf(plan)
  if (group !== undefined) {
    vars[CHANNEL_VARS.groupId] = group.id
    vars[CHANNEL_VARS.groupName] = group.name
  }
  const endUser = endUserOf(plan)
  if (endUser !== undefined && Object.values(endUser).some((v) => v !== undefined)) {
    vars[CHANNEL_VARS.endUser] = commands.encodeEndUser(endUser)
  }
  if (plan.originator.kind === 'user' && plan.originator.autoAnswer) vars[CHANNEL_VARS.autoAnswer] = 'true'
  // The daemon's dialplan records the answered leg's conversation under this id (xmlcurl/recording.ts).
  if (plan.recording !== undefined) vars[CHANNEL_VARS.recordingId] = plan.recording.id
  const callerIdNumber = dom !== undefined ? callerIdNumberOf(plan, dom) : undefined
  const originateLegs: OriginateLeg[] = legs.map((l) => ({
    uuid: l.uuid,
    endpoint: l.endpoint,
    ...(l.userId !== undefined ? { vars: { [CHANNEL_VARS.userId]: l.userId } } : {}),
    ...(l.autoAnswer === true ? { autoAnswer: { host: domainName } } : {}),
    // FreeSWITCH records the leg's answer itself, for recovery after the daemon was away (pbx/leg-record.ts).
    record: legRecordSlot(domainName, plan.requestId, l.uuid),
  }))
  return commands.originate({
    legs: originateLegs,
    vars,
    ...(plan.callingName !== undefined ? { callerIdName: plan.callingName } : {}),
    ...(callerIdNumber !== undefined ? { callerIdNumber } : {}),
    timeoutSec,
    target: { kind: 'dialplan', extension: ROUTE_EXTENSION, context: domainName },
    ...onAnswerOf(plan),
  })
}
