/** Shared setup of the xml_curl tests: a two-domain directory, the captured request forms, a document reader. */
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { XMLParser, XMLValidator } from 'fast-xml-parser'
import { daemonSchema, domainSchema } from '../../src/config/schema.js'
import { runtimeOf, type Runtime } from '../../src/runtime/store.js'

/** Request values meant to break out of a document or into an expansion (injection.test.ts, document.test.ts). */
export const ATTACKS = [
  '${system(touch /tmp/pwned)}',
  '$${hostname}',
  '1002\n<action application="system" data="id"/>',
  '1002\r\nhangup',
  '"/><action application="system" data="id"/><x a="',
  '<![CDATA[x]]>',
  ']]>',
  '1002,sofia/gateway/pstn/0900',
  '1002|user/mallory@other.test',
  '{ignore_early_media=true}user/bob',
  '[leg_timeout=1]user/bob',
  '&#36;{system(id)}',
  "1002' or '1'='1",
  '\u0000\u0007\u001b',
]

export const XML_CURL_USER = 'freeswitch'
export const XML_CURL_PASSWORD = 'xml-curl-secret'

export const exampleDomain = {
  name: 'example.test',
  api_tokens: ['plain-token-for-tests'],
  privileges: ['ON_THE_FLY_IVR_ALLOWED'],
  channel_limit: 20,
  gateway: 'pstn',
  calling_numbers: ['0501230000', '0501230001'],
  users: [
    { id: '1', name: 'alice', label: 'Alice', extension: '1001', did: '0501230001', password: 'alice-sip-secret' },
    { id: '2', name: 'bob', label: 'Bob', extension: '1002', did: '0501231002', password: 'bob-sip-secret' },
    { id: '3', name: 'carol', extension: '1003', password: 'carol-sip-secret' },
    { id: '4', name: 'dave', password: 'dave-sip-secret' },
  ],
  groups: [
    { id: '10', name: 'sales', label: 'Sales', type: 'CALL_CENTER', extension: '2001', did: '0501232001', members: ['carol', 'alice', 'bob'], answer_timeout: 40, member_answer_timeout: 15 },
    { id: '11', name: 'empty', extension: '2002', members: [] },
  ],
  extensions: [{ number: '3001', xml_url: 'https://ivr.example.test/menu?a=1&b=2' }],
}

export const otherDomain = {
  name: 'other.test',
  api_tokens: ['other-token-for-tests'],
  channel_limit: 5,
  gateway: 'other-gw',
  calling_numbers: ['0609990000'],
  users: [{ id: '9', name: 'mallory', extension: '1009', did: '0609991009', password: 'mallory-sip-secret' }],
  groups: [{ id: '90', name: 'ops', extension: '2009', members: ['mallory'] }],
  extensions: [{ number: '3009', xml_url: 'https://ivr.other.test/x' }],
}

export function makeRuntime(domains: readonly unknown[] = [exampleDomain, otherDomain]): Runtime {
  const daemon = daemonSchema.parse({ freeswitch: { mode: 'simulator' }, xml_curl: { username: XML_CURL_USER, password: XML_CURL_PASSWORD } })
  return runtimeOf({ file: '/test/daemon.yaml', daemon, domains: domains.map((d) => domainSchema.parse(d)) })
}

const fixtureDir = fileURLToPath(new URL('./fixtures/', import.meta.url))

/** A captured request form; `changes` sets fields (a string) or removes them (null). */
export function fixture(name: string, changes: Record<string, string | null> = {}): URLSearchParams {
  const form = new URLSearchParams(readFileSync(`${fixtureDir}${name}.form`, 'utf8'))
  for (const [k, v] of Object.entries(changes)) {
    if (v === null) form.delete(k)
    else form.set(k, v)
  }
  return form
}

/**
 * The answered originated leg of
 * test/fixtures/freeswitch/xml_curl/04-originate-1002-xml-default.txt, moved to our context and
 * extension, with the cod_* variables given.
 */
export function originatedLeg(vars: Record<string, string | null>, more: Record<string, string | null> = {}): URLSearchParams {
  const changes: Record<string, string | null> = {
    'Hunt-Context': 'example.test',
    'Caller-Context': 'example.test',
    'Hunt-Destination-Number': 'cod_route',
    'Caller-Destination-Number': 'cod_route',
    variable_cod_request_id: 'req-0001',
    variable_cod_domain: 'example.test',
    variable_cod_role: 'originator',
    variable_cod_operation: 'call_user',
  }
  for (const [k, v] of Object.entries(vars)) changes[`variable_${k}`] = v
  return fixture('04-dialplan-originated', { ...changes, ...more })
}

/**
 * The call from phone 1004 of test/fixtures/freeswitch/xml_curl/05-invite-1004-to-1002.txt, as
 * alice of example.test dialing `number`.
 */
export function phoneCall(number: string, more: Record<string, string | null> = {}): URLSearchParams {
  return fixture('05-dialplan-phone', {
    'Hunt-Context': 'example.test',
    'Caller-Context': 'example.test',
    'Hunt-Destination-Number': number,
    'Caller-Destination-Number': number,
    variable_user_name: 'alice',
    variable_domain_name: 'example.test',
    variable_user_context: 'example.test',
    ...more,
  })
}

/** What FreeSWITCH's parser does to attribute values that matters here: numeric character references. */
const decodeRefs = (s: string): string => s.replace(/&#(\d+);/g, (_, n: string) => String.fromCharCode(Number(n)))

interface Node {
  readonly [tag: string]: unknown
}
const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '', preserveOrder: true, parseAttributeValue: false })

export interface Element {
  readonly tag: string
  readonly attrs: Record<string, string>
  readonly children: Element[]
}

function toElements(nodes: unknown): Element[] {
  if (!Array.isArray(nodes)) return []
  const out: Element[] = []
  for (const n of nodes as Node[]) {
    const tag = Object.keys(n).find((k) => k !== ':@')
    if (tag === undefined || tag === '#text') continue
    const rawAttrs = (n[':@'] ?? {}) as Record<string, string>
    const attrs = Object.fromEntries(Object.entries(rawAttrs).map(([k, v]) => [k, decodeRefs(String(v))]))
    out.push({ tag, attrs, children: toElements(n[tag]) })
  }
  return out
}

/** Parses a document (failing the test if it is not well-formed XML). */
export function parseDocument(xml: string): Element {
  const valid = XMLValidator.validate(xml)
  if (valid !== true) throw new Error(`not well-formed: ${JSON.stringify(valid.err)}\n${xml}`)
  const [root] = toElements(parser.parse(xml))
  if (root === undefined) throw new Error('empty document')
  return root
}

export function findAll(root: Element, tag: string): Element[] {
  const out: Element[] = []
  const walk = (e: Element) => {
    if (e.tag === tag) out.push(e)
    e.children.forEach(walk)
  }
  walk(root)
  return out
}

/** The dialplan actions as `app data` lines, in order. */
export const actionsOf = (xml: string): string[] =>
  findAll(parseDocument(xml), 'action').map((a) => (a.attrs.data === undefined ? a.attrs.application ?? '' : `${a.attrs.application} ${a.attrs.data}`))

/**
 * The body FreeSWITCH would post for these fields: switch_event_build_param_string writes
 * `name=value&` with the value through switch_url_encode (switch_utils.c, v1.10.12), which
 * encodes bytes outside ' '..'~' and SWITCH_URL_UNSAFE ("\r\n #%&+:;<=>?@[\]^`{|}\"") as %XX,
 * but leaves a `%` followed by two uppercase hex digits as it is (no double encoding).
 */
export function freeswitchBody(form: URLSearchParams): string {
  const UNSAFE = '\r\n #%&+:;<=>?@[\\]^`{|}"'
  const HEX = '0123456789ABCDEF'
  const encode = (value: string): string => {
    const bytes = Buffer.from(value, 'utf8')
    let out = ''
    for (let i = 0; i < bytes.length; i++) {
      const b = bytes[i] ?? 0
      const c = String.fromCharCode(b)
      const keep = c === '%' && i + 2 < bytes.length && HEX.includes(String.fromCharCode(bytes[i + 1] ?? 0)) && HEX.includes(String.fromCharCode(bytes[i + 2] ?? 0))
      if (!keep && (b < 0x20 || b > 0x7e || UNSAFE.includes(c))) out += `%${HEX[b >> 4]}${HEX[b & 15]}`
      else out += c
    }
    return out
  }
  return [...form].map(([k, v]) => `${k}=${encode(v)}`).join('&')
}

/** What the daemon reads after FreeSWITCH encoded these fields and the form was decoded. */
export const overTheWire = (form: URLSearchParams): URLSearchParams => new URLSearchParams(freeswitchBody(form))
