/**
 * `<Transfer callingNumber failureAction answerTimeout>target</Transfer>`: connects the call to
 * a user, group, extension, DID or PSTN number of the domain, dialling exactly what the
 * daemon's dialplan dials for that destination: the actions come from the xml_curl route
 * builders (xmlcurl/routes.ts routeActions) and run on the channel one by one (sendmsg
 * execute), so the variables, exports, ringback, hunt order and timeouts are the dialplan's.
 *
 * Differences, on purpose:
 * - `call_timeout=<answerTimeout>` comes first (switch_ivr_originate reads call_timeout of the
 *   calling channel), and a group's hunt is bounded by answerTimeout as well as by its own
 *   answer_timeout / member_answer_timeout;
 * - the dialplan's final `hangup ${originate_disposition}` is not run: a failed transfer goes on
 *   in the document (`continue_on_fail=true` from the route builders keeps the channel up,
 *   switch_channel.c switch_channel_handle_cause), with `TransferFailureReason` set from the
 *   cause the bridge left in `originate_failed_cause` (mod_dptools.c audio_bridge_function) /
 *   `originate_disposition` (switch_ivr_originate.c), mapped as the API's callbacks map causes;
 * - an extension bound to an XML URL is what the dialplan hands to the IVR runner: here its
 *   document simply replaces this one.
 *
 * A bridge that connected shows as a CHANNEL_BRIDGE on the channel
 * (test/fixtures/freeswitch/esl/18-uuid-bridge.txt and 19-originate-xml-default.txt) or as
 * originate_disposition SUCCESS; `hangup_after_bridge=true` makes FreeSWITCH hang the call up when
 * the connected call ends, so the session ends without hanging up itself.
 */
import { NAME_RE, isPstnNumber } from '../../config/schema.js'
import { errorIdOfCause } from '../../pbx/hangup-causes.js'
import { app } from '../../pbx/commands.js'
import { err, ok, type Result } from '../../util/result.js'
import { LIMIT_CAUSE } from '../../xmlcurl/bridge-gate.js'
import { routeActions, type Action } from '../../xmlcurl/routes.js'
import type { TransferTarget } from '../transfer-gate.js'
import * as C from '../syntax/checks.js'
import type { ElementBase, Param, ValueCheck } from '../syntax/types.js'
import { EXEC_TIMEOUT_MS, GONE, NEXT, runtimeError, type ElementModule } from './types.js'

/** Transfer's failureAction: fallback URLs, or a Section of this document. */
export type FailureAction =
  | { readonly kind: 'urls'; readonly urls: readonly string[] }
  | { readonly kind: 'section'; readonly name: string }

export interface Transfer extends ElementBase {
  readonly type: 'Transfer'
  /** A user, group, extension, DID or PSTN number of the domain (the element's text). */
  readonly target: Param<string>
  readonly callingNumber: Param<string> | undefined
  readonly failureAction: Param<FailureAction> | undefined
  /** 5-180 seconds, default 30. */
  readonly answerTimeout: Param<number>
}

declare module '../syntax/types.js' {
  interface IvrElementTypes {
    Transfer: Transfer
  }
}

const check = <T>(rule: string, convert: (s: string) => Result<T, string>): ValueCheck<T> => ({ rule, convert: (raw) => convert(raw.trim()) })

const TARGET_RULE = 'a user, group, extension, DID or PSTN number (A-Z a-z 0-9 . _ -, or + then digits * #)'
/** A user, group, extension or DID name of the domain, or a PSTN number. */
const TARGET = check(TARGET_RULE, (s) => (NAME_RE.test(s) || isPstnNumber(s) ? ok(s) : err(`must be ${TARGET_RULE}`)))

const CALLING_NUMBER_RULE = 'a phone number: optional + then 2-32 digits, * or #'
const CALLING_NUMBER = check(CALLING_NUMBER_RULE, (s) => (isPstnNumber(s) ? ok(s) : err(`must be ${CALLING_NUMBER_RULE}`)))

const FAILURE_ACTION_RULE = 'http or https URLs separated by commas, or a Section name'
/** http(s) URLs (fallbacks in order) or, for anything else, the name of a Section. */
const FAILURE_ACTION = check(FAILURE_ACTION_RULE, (s): Result<FailureAction, string> => {
  if (/^https?:\/\//i.test(s)) {
    const urls = C.urlList.convert(s)
    return urls.ok ? ok({ kind: 'urls', urls: urls.value }) : urls
  }
  if (C.SECTION_NAME_RE.test(s)) return ok({ kind: 'section', name: s })
  return err(`must be ${FAILURE_ACTION_RULE}`)
})

/** The spec fixes answerTimeout to 5-180 seconds. */
const ANSWER_TIMEOUT = C.intIn(5, 180)

export type TransferFailureReason = 'busy' | 'no_answer' | 'rejected' | 'not_registered' | 'failed'

/**
 * The TransferFailureReason of a bridge's cause (as result callbacks map it, pbx/hangup-causes.ts; a cancel is a plain failure).
 * @internal Exported for tests: test/ivr/runner checks the cause mapping.
 */
export function failureReason(cause: string): TransferFailureReason {
  const id = errorIdOfCause(cause)
  return id === 'cancelled' ? 'failed' : id
}

/** The cause FreeSWITCH gives when there was nothing to dial (a group without members). */
const NOTHING_TO_DIAL = 'NO_ROUTE_DESTINATION'

export const transfer: ElementModule<Transfer> = {
  name: 'Transfer',
  attributes: ['callingNumber', 'failureAction', 'answerTimeout'],
  parse(node, ctx) {
    const failureAction = ctx.optionalAttr(node, 'failureAction', FAILURE_ACTION)
    if (failureAction?.kind === 'literal' && failureAction.value.kind === 'section') {
      ctx.sectionRef(failureAction.value.name, node.pos, 'Transfer failureAction')
    }
    return {
      type: 'Transfer',
      pos: node.pos,
      target: ctx.textValue(node, 'a user, group, extension, DID or number to connect to', TARGET),
      callingNumber: ctx.optionalAttr(node, 'callingNumber', CALLING_NUMBER),
      failureAction,
      answerTimeout: ctx.attr(node, 'answerTimeout', ANSWER_TIMEOUT, 30),
    }
  },
  async run(el, ctx) {
    const target = ctx.value(el.target)
    if (!target.ok) return target.error
    const callingNumber = ctx.optional(el.callingNumber)
    if (!callingNumber.ok) return callingNumber.error
    const answerTimeout = ctx.value(el.answerTimeout)
    if (!answerTimeout.ok) return answerTimeout.error
    const failureAction = ctx.optional(el.failureAction)
    if (!failureAction.ok) return failureAction.error

    const domain = ctx.domain
    if (callingNumber.value !== undefined && !domain.mayPresent(callingNumber.value)) {
      return runtimeError(`Transfer callingNumber ${JSON.stringify(callingNumber.value)} is not one of the calling numbers of ${domain.name}`)
    }
    const match = domain.resolveDestination(target.value)
    if (match === undefined) {
      return runtimeError(`Transfer: ${JSON.stringify(target.value)} is no user, group, extension, DID or number of ${domain.name}`)
    }
    if (match.kind === 'extension') return ctx.loadDocument([match.extension.xml_url], 'POST')

    const timeout = answerTimeout.value
    let route: TransferTarget
    switch (match.kind) {
      case 'user':
        route = match
        break
      case 'group':
        route = {
          kind: 'group',
          group: {
            ...match.group,
            answer_timeout: Math.min(match.group.answer_timeout, timeout),
            member_answer_timeout: Math.min(match.group.member_answer_timeout, timeout),
          },
        }
        break
      case 'pstn':
        route = { kind: 'pstn', number: match.number }
        break
    }
    const leg = callingNumber.value === undefined ? ctx.leg() : { ...ctx.leg(), callingNumber: callingNumber.value }
    let actions: Action[]
    try {
      actions = routeActions(domain, leg, route)
    } catch (e) {
      // safe() refused a value: never expected from directory records, but never dialled either.
      return runtimeError(`Transfer: ${e instanceof Error ? e.message : String(e)}`)
    }
    const steps: Action[] = [{ app: 'set', data: `call_timeout=${timeout}` }, ...actions.filter((a) => a.app !== 'hangup')]

    let lastCause = NOTHING_TO_DIAL
    // The limit is asked before anything rings: a refusal fails the Transfer as the dialplan's
    // gate fails a bridge (NORMAL_CIRCUIT_CONGESTION), and the document goes on.
    const fits = await ctx.mayTransfer(route)
    if (ctx.signal.aborted) return GONE
    if (!fits) {
      lastCause = LIMIT_CAUSE
      steps.length = 0
    }
    for (const step of steps) {
      const isBridge = step.app === 'bridge'
      const bridgesBefore = ctx.bridges()
      const done = await ctx.exec(app(step.app, step.data ?? ''), isBridge ? EXEC_TIMEOUT_MS.bridge : EXEC_TIMEOUT_MS.short)
      if (!done.ok) return done.error
      if (!isBridge) continue
      const disposition = done.value.variable_originate_disposition ?? ''
      if (ctx.bridges() > bridgesBefore || disposition.toUpperCase() === 'SUCCESS') {
        return { kind: 'end', hangup: false, reason: `Transfer to ${target.value} connected` }
      }
      lastCause = done.value.variable_originate_failed_cause ?? (disposition !== '' ? disposition : 'NORMAL_TEMPORARY_FAILURE')
    }

    const reason = failureReason(lastCause)
    ctx.setTransferFailureReason(reason)
    ctx.log.info({ target: target.value, cause: lastCause, reason }, 'ivr Transfer failed')
    const action = failureAction.value
    if (action === undefined) return NEXT
    if (action.kind === 'urls') return ctx.loadDocument(action.urls, 'POST')
    if (!ctx.document.sections.has(action.name)) return runtimeError(`Transfer failureAction: there is no Section named ${JSON.stringify(action.name)}`)
    return { kind: 'goto', section: action.name }
  },
}
