/**
 * The ESL commands that act on the switch (mod_event_socket.c parse_command, api_exec):
 *
 * - `api <cmd> <arg>`: the command's output as api/response; an empty output is `-ERR no reply`.
 * - `bgapi`: `+OK Job-UUID` at once (the client's `Job-UUID` header is used as is,
 *   test/fixtures/freeswitch/esl/22-misc-replies.txt), then BACKGROUND_JOB with Job-Command,
 *   Job-Command-Arg and the result as body.
 * - `sendmsg <uuid>`: call-command execute (execute-app-name/-arg or text/plain body,
 *   event-uuid, loops) or hangup.
 *
 * Each writes through the connection's `send` (which bypasses the events held while a command
 * runs) so replies keep their place before those events.
 */
import { randomUUID } from 'node:crypto'
import { executeApi } from '../api/execute.js'
import type { Switch } from '../core/switch.js'
import { str2cause } from '../model/causes.js'
import { apiResponse, commandReply } from './format.js'
import type { Command } from './framing.js'

/** Writes bytes to the connection now, ahead of the events held back while the command runs. */
export type Send = (text: string) => void

function splitCommand(text: string): { name: string; arg: string } {
  const sp = text.indexOf(' ')
  return { name: sp < 0 ? text : text.slice(0, sp), arg: sp < 0 ? '' : text.slice(sp + 1) }
}

export async function api(sw: Switch, text: string, send: Send): Promise<void> {
  const { name, arg } = splitCommand(text)
  const r = await executeApi(sw, name, arg)
  let body = r === undefined ? `-ERR ${name} Command not found!\n` : r.text
  // api_exec: an empty reply becomes "-ERR no reply\n" (only for api, not bgapi).
  if (body === '') body = '-ERR no reply\n'
  send(apiResponse(body))
  r?.after?.()
}

export function bgapi(sw: Switch, text: string, cmd: Command, send: Send): void {
  const { name, arg } = splitCommand(text)
  const job = cmd.headers.get('job-uuid') ?? randomUUID()
  send(commandReply(`+OK Job-UUID: ${job}`, [['Job-UUID', job]]))
  void (async () => {
    const r = await executeApi(sw, name, arg)
    const body = r === undefined ? `-ERR ${name} Command not found!\n` : r.text
    sw.bus.fire(
      'BACKGROUND_JOB',
      [
        ['Job-UUID', job],
        ['Job-Command', name],
        ['Job-Command-Arg', arg],
      ],
      body,
    )
    r?.after?.()
  })()
}

/** sendmsg <uuid>: returns the reply text. */
export function sendmsg(sw: Switch, rest: string, cmd: Command): string {
  let uuid = rest.trim()
  if (uuid === '') uuid = cmd.headers.get('session-id') ?? ''
  const s = uuid === '' ? undefined : sw.sessions.get(uuid)
  if (s === undefined) return `-ERR invalid session id [${uuid}]`
  const h = cmd.headers
  const command = (h.get('call-command') ?? '').toLowerCase()
  if (command === 'execute') {
    const app = h.get('execute-app-name')
    let arg = h.get('execute-app-arg') ?? ''
    if (arg === '' && (h.get('content-type') ?? '').toLowerCase() === 'text/plain') arg = cmd.body ?? ''
    const loops = Math.max(1, parseInt(h.get('loops') ?? '1', 10) || 1)
    const eventUuid = h.get('event-uuid')
    const eventUuidName = h.get('event-uuid-name')
    const opts = { ...(eventUuid !== undefined ? { appUuid: eventUuid } : {}), ...(eventUuidName !== undefined ? { appUuidName: eventUuidName } : {}) }
    if (app !== undefined && app !== '') {
      sw.queueMessage(s, async () => {
        for (let i = 0; i < loops && s.up; i++) await sw.execApp(s, app, arg, opts)
      })
    }
  } else if (command === 'hangup') {
    sw.hangup(s, str2cause(h.get('hangup-cause')))
  }
  return '+OK'
}
