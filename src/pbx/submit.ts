/**
 * Submitting a background job in two steps: "FreeSWITCH accepted it" (command/reply
 * `+OK Job-UUID: <j>`, test/fixtures/freeswitch/esl/06-originate-sofia-contact.txt) and "the job
 * ended" (BACKGROUND_JOB with `+OK <uuid>` or `-ERR <CAUSE>`). The API replies after the first step
 * (docs/design.md "HTTP API decisions", When the reply is sent), the result callback follows the
 * second. PbxClient.bgapi only has the second step, so the ESL connection (pbx/connection.ts)
 * offers submit(); other PbxClients fall back to bgapi.
 */
import type { EslCommand, PbxClient, PbxError } from './types.js'
import type { Result } from '../util/result.js'
import { ok } from '../util/result.js'

export interface SubmittedJob {
  readonly jobUuid: string
  /** The job's body (`+OK ...` / `-ERR ...`), or disconnected/timeout when it was lost. */
  readonly result: Promise<Result<string, PbxError>>
  /**
   * Written to FreeSWITCH, but its acceptance never came (the socket closed, or the reply is
   * overdue): it may run, so it counts as placed, never as refused (src/pbx/outgoing.ts).
   */
  readonly unconfirmed?: true
}

export interface SubmitOptions {
  /** How long FreeSWITCH may take to accept the command (command/reply). */
  readonly acceptTimeoutMs?: number
  /** How long the job may take to end once accepted (an originate: its timeout plus a margin). */
  readonly resultTimeoutMs: number
}

export interface PbxJobSubmitter {
  submit(command: EslCommand, opts: SubmitOptions): Promise<Result<SubmittedJob, PbxError>>
}

const canSubmit = (pbx: PbxClient): pbx is PbxClient & PbxJobSubmitter =>
  typeof (pbx as Partial<PbxJobSubmitter>).submit === 'function'

/** submit() where the client has it; otherwise bgapi(), counted as accepted once it was handed over. */
export async function submitJob(pbx: PbxClient, command: EslCommand, opts: SubmitOptions): Promise<Result<SubmittedJob, PbxError>> {
  if (canSubmit(pbx)) return pbx.submit(command, opts)
  if (!pbx.isConnected()) return { ok: false, error: { kind: 'disconnected' } }
  return ok({ jobUuid: '', result: pbx.bgapi(command, opts.resultTimeoutMs) })
}
