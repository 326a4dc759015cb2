/**
 * ESL commands as they may appear in a debug log: every command and application the daemon
 * sends is logged at debug (pbx/connection.ts), with the values of secret variables replaced.
 *
 * Which variables are secret: any whose name holds `pass`, `secret`, `token`, `auth`, `key`,
 * `credential` or `cookie` (case-insensitive): `sip_auth_password`, `sip_auth_username`,
 * gateway credentials, API keys of `api_on_*` hooks, `sip_h_X-Auth-Token`... The daemon sets none
 * of these today (pbx/commands.ts writes ids, names, numbers, uuids, percent-encoded end_user
 * text); the rule is here so that one added later is not logged. End-user text (`cod_end_user*`)
 * is personal data but not a secret: it stays, percent-encoded as it was sent. The ESL password
 * itself is written by the session's `auth` command (esl-session.ts), which is never logged.
 */
import type { EslApp } from './types.js'

const SECRET_NAME_RE = /pass|secret|token|auth|key|credential|cookie/i

/** @internal Exported for tests: test/pbx looks for the marker. */
export const REDACTED = '<redacted>'

/**
 * Whether a channel variable's value must stay out of logs.
 * @internal Exported for tests: test/pbx checks the names one by one.
 */
export const isSecretVariable = (name: string): boolean => SECRET_NAME_RE.test(name)

/**
 * `name=value` pairs as commands.ts writes them: after `{`, `[`, `,` or a blank (originate
 * variables), a value quoted with `'...'` or running to the next `,` `}` `]` or blank.
 */
const PAIR_RE = /(^|[{[,\s])([A-Za-z][A-Za-z0-9_-]*)=('[^']*'|[^,}\]\s]*)/g

/** An API command line with the values of secret variables replaced. */
export function redactCommand(text: string): string {
  // uuid_setvar <uuid> <name> <value>: the value is everything after the name.
  const setvar = /^(uuid_setvar \S+ )(\S+)( .*)?$/s.exec(text)
  if (setvar !== null && isSecretVariable(setvar[2] ?? '') && setvar[3] !== undefined) return `${setvar[1]}${setvar[2]} ${REDACTED}`
  return text.replace(PAIR_RE, (whole, lead: string, name: string) => (isSecretVariable(name) ? `${lead}${name}=${REDACTED}` : whole))
}

/** An application and its argument for the log: `set`/`export` of a secret variable loses its value. */
export function redactApp(app: EslApp): { readonly app: string; readonly arg: string } {
  if (app.app === 'set' || app.app === 'export' || app.app === 'unset') {
    const m = /^(nolocal:)?([^=]*)=/.exec(app.arg)
    if (m !== null && isSecretVariable(m[2] ?? '')) return { app: app.app, arg: `${m[1] ?? ''}${m[2]}=${REDACTED}` }
    return { app: app.app, arg: app.arg }
  }
  return { app: app.app, arg: redactCommand(app.arg) }
}
