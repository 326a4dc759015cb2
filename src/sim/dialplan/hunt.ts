/**
 * The XML dialplan as mod_dialplan_xml.c (v1.10.12) hunts it, with the document fetched from
 * mod_xml_curl (dialplan_xml_locate: the channel's event data plus `Hunt-*` caller profile
 * headers, test/fixtures/freeswitch/xml_curl/04-originate-1002-xml-default.txt and
 * 05-invite-1004-to-1002.txt).
 *
 * - No binding, an HTTP error, an empty or unparsable body, "not found": FreeSWITCH falls back to
 *   its static XML (requests 10, 13, 14, 15 in test/fixtures/freeswitch/xml_curl/). The simulator
 *   has no static dialplan, so: no route.
 * - `<context name>` must equal the caller profile's context (else `global`), otherwise
 *   "Context X not found" and no route
 *   (test/fixtures/freeswitch/xml_curl/11-dialplan-wrong-context.txt). No matching extension: no
 *   route.
 * - Extensions in order; conditions with `field` (caller profile field, or `${var}`) and
 *   `expression` (a regex; `$1`.. substituted into action data), `break` on-false (default),
 *   on-true, always, never; `anti-action`s when a condition fails; nested conditions; `inline`
 *   actions run while hunting; extension `continue="true"` keeps hunting. Time-of-day and
 *   `regex="all|any|xor"` conditions are not simulated.
 *
 * The composition root registers huntDialplan into the core as its CS_ROUTING step.
 */
import type { InlineApp, Switch } from '../core/switch.js'
import { SimChannel } from '../model/channel.js'
import type { QueuedApp, Session } from '../model/session.js'
import { isTrue } from '../text/switch-true.js'
import { xmlCurlFetch } from '../xml/curl.js'
import { childrenNamed, findSection, parseXml, type XmlElement } from '../xml/document.js'

/** switch_caller_get_field_by_name. */
function callerField(s: Session, field: string): string | undefined {
  const p = s.profile
  switch (field) {
    case 'dialplan':
      return p.dialplan
    case 'username':
      return p.username
    case 'caller_id_name':
      return p.callerIdName
    case 'caller_id_number':
      return p.callerIdNumber
    case 'orig_caller_id_name':
      return p.origCallerIdName
    case 'orig_caller_id_number':
      return p.origCallerIdNumber
    case 'callee_id_name':
      return p.calleeIdName
    case 'callee_id_number':
      return p.calleeIdNumber
    case 'ani':
      return p.ani
    case 'network_addr':
      return p.networkAddr
    case 'rdnis':
      return p.rdnis
    case 'destination_number':
      return p.destinationNumber
    case 'uuid':
      return p.uniqueId
    case 'source':
      return p.source
    case 'context':
      return p.context
    case 'chan_name':
      return p.channelName
    case 'transfer_source':
      return p.transferSource
    case 'profile_index':
      return String(p.profileIndex)
    default:
      return undefined
  }
}

function regexMatch(expression: string, data: string): RegExpExecArray | null {
  try {
    return new RegExp(expression).exec(data)
  } catch {
    return null
  }
}

/** switch_perform_substitution: `$N` becomes capture N. */
const substitute = (data: string, m: RegExpExecArray): string => data.replace(/\$(\d)/g, (_x, n: string) => m[Number(n)] ?? '')

const actionData = (a: XmlElement): string => (a.text !== '' ? a.text : (a.attrs['data'] ?? ''))

async function parseExten(sw: Switch, s: Session, node: XmlElement, apps: QueuedApp[], inline: InlineApp, recur: number): Promise<boolean> {
  if (recur > 20) return false
  let proceed = false
  for (const cond of childrenNamed(node, 'condition')) {
    const field = cond.attrs['field']
    const exprChild = childrenNamed(cond, 'expression')[0]
    const expression = sw.expand(s, exprChild !== undefined ? exprChild.text : (cond.attrs['expression'] ?? ''))
    const brk = (cond.attrs['break'] ?? 'on-false').toLowerCase()
    let antiAction = true
    let match: RegExpExecArray | null = null
    if (field !== undefined) {
      const data = field.includes('$') ? sw.expand(s, field) : (callerField(s, field) ?? '')
      match = regexMatch(expression, data)
      proceed = match !== null
      if (proceed) antiAction = false
    } else {
      // No field (and no time condition): an absolute condition.
      antiAction = false
      proceed = true
    }
    if (antiAction) {
      for (const a of childrenNamed(cond, 'anti-action')) {
        await addAction(a, actionData(a), apps, inline)
        proceed = true
      }
    } else {
      for (const a of childrenNamed(cond, 'action')) {
        const raw = actionData(a)
        const data = match !== null && expression.includes('(') ? substitute(raw, match) : raw
        await addAction(a, data, apps, inline)
      }
    }
    if ((!antiAction && brk === 'on-true') || (antiAction && brk === 'on-false') || brk === 'always') break
    if (proceed && childrenNamed(cond, 'condition').length > 0) {
      proceed = await parseExten(sw, s, cond, apps, inline, recur + 1)
      if (!proceed) {
        if (brk === 'never') continue
        return false
      }
    }
  }
  return proceed
}

async function addAction(a: XmlElement, data: string, apps: QueuedApp[], inline: InlineApp): Promise<void> {
  const name = a.attrs['application'] ?? ''
  const loops = Math.max(1, parseInt(a.attrs['loop'] ?? '1', 10) || 1)
  for (let i = 0; i < loops; i++) {
    if (isTrue(a.attrs['inline'])) await inline(name, data)
    else apps.push({ name, arg: data })
  }
}

/**
 * Fetches and hunts the dialplan for the session's current caller profile. Returns the
 * extension's applications, or undefined when there is no route.
 */
export async function huntDialplan(sw: Switch, s: Session, inline: InlineApp): Promise<QueuedApp[] | undefined> {
  const binding = sw.xmlCurl
  if (binding === undefined) return undefined
  const form = sw.bus.coreHeaders('REQUEST_PARAMS', ['mod_dialplan_xml.c', 'dialplan_xml_locate', '610'])
  form.push(...s.eventData(), ...SimChannel.profileHeaders('Hunt', s.profile, s.times))
  const res = await xmlCurlFetch(binding, { hostname: sw.bus.identity.hostname, section: 'dialplan', tagName: '', keyName: '', keyValue: '', params: form }, sw.logger, sw.closing)
  if (!s.up) return undefined
  if (!res.ok) return undefined
  const section = findSection(parseXml(res.body), 'dialplan')
  if (section === undefined || section === 'not-found') {
    if (section === undefined) sw.logger.warn({ uuid: s.uuid }, 'sim dialplan: unusable document')
    return undefined
  }
  const ctx = s.profile.context || 'default'
  const contexts = childrenNamed(section, 'context')
  const context = contexts.find((c) => c.attrs['name'] === ctx) ?? contexts.find((c) => c.attrs['name'] === 'global')
  if (context === undefined) {
    sw.logger.info({ uuid: s.uuid, context: ctx }, `sim dialplan: Context ${ctx} not found`)
    return undefined
  }
  const apps: QueuedApp[] = []
  for (const ext of childrenNamed(context, 'extension')) {
    const proceed = await parseExten(sw, s, ext, apps, inline, 0)
    if (!s.up) return undefined
    if (proceed && !isTrue(ext.attrs['continue'])) break
  }
  return apps
}
