/**
 * `record_session <path>` (mod_dptools.c record_session_function → switch_ivr_async.c
 * switch_ivr_record_session_event), as FreeSWITCH 1.10.12 does it on the captures
 * test/fixtures/freeswitch/esl/28-31 (docs/recording.md "How FreeSWITCH records"):
 *
 * - The application makes the file's folders, opens the file and fires RECORD_START
 *   (`Record-File-Path`) before its CHANNEL_EXECUTE_COMPLETE, whether or not the leg is bridged.
 * - A path that cannot be written (its folder cannot be made, the file cannot be opened) fires
 *   nothing: the application ends with `record_completion_cause=uri-failure` on the channel and
 *   the call goes on (esl/29).
 * - The recording counts while the leg carries media, or only while it is bridged with
 *   `RECORD_BRIDGE_REQ=true`; it is stereo with `RECORD_STEREO=true` (left: the leg's party,
 *   right: the other one).
 * - At the hangup (CS_HANGUP, before CHANNEL_HANGUP_COMPLETE) the file is finished and RECORD_STOP
 *   fires with `Record-File-Path` and `Record-Completion-Cause`, after the variables
 *   `record_file_size`, `record_samples`, `record_seconds`, `record_ms`,
 *   `record_completion_cause` (`success-silence` on a hangup, esl/28 and 31). Nothing counted: the
 *   file is removed, `RECORD_DISCARDED=true`, cause `empty-file` (esl/30: a bridge that never
 *   connected).
 *
 * The simulator has no media: the file holds a tone per party (wav-file.ts), as long as the
 * recording counted in wall-clock time (the time the events' timestamps show, whatever the time
 * scale). Not modelled: the `+<seconds>` limit and `{vars}` arguments, RECORD_ANSWER_REQ,
 * RECORD_HANGUP_ON_ERROR and the other RECORD_* options, stop_record_session, a relative path
 * (FreeSWITCH puts it under its base_dir, which the simulator does not have: uri-failure).
 *
 * The API's `uuid_record <uuid> start|stop <path>` (mod_commands.c session_record_function) puts
 * the same media bug on the leg (startRecording) and removes it by path (stopRecording); stopped
 * so, RECORD_STOP says `success-maxtime` (esl/48-uuid-record.txt), fired before the API's reply.
 */
import { mkdir, open, rm, type FileHandle } from 'node:fs/promises'
import { dirname, isAbsolute } from 'node:path'
import type { Switch } from '../core/switch.js'
import type { MediaBug, Session } from '../model/session.js'
import { separateString } from '../text/fs-strings.js'
import { isTrue } from '../text/switch-true.js'
import { FRAME_SAMPLES, SAMPLE_RATE, WAV_HEADER_BYTES, wavHeader, writeTone } from './wav-file.js'

const FRAME_MS = (FRAME_SAMPLES * 1000) / SAMPLE_RATE

/** One record_session on one channel: counts the time it records, writes the file when it closes. */
class SessionRecording implements MediaBug {
  private countingSince: number | undefined
  private countedMs = 0

  constructor(
    private readonly sw: Switch,
    private readonly s: Session,
    readonly path: string,
    private readonly file: FileHandle,
    private readonly channels: 1 | 2,
    private readonly bridgeRequired: boolean,
  ) {
    if (!bridgeRequired || s.bridge !== undefined) this.countingSince = performance.now()
  }

  bridged(on: boolean): void {
    if (!this.bridgeRequired) return
    if (on) this.countingSince ??= performance.now()
    else this.stopCounting()
  }

  private stopCounting(): void {
    if (this.countingSince === undefined) return
    this.countedMs += performance.now() - this.countingSince
    this.countingSince = undefined
  }

  close(): Promise<void> {
    return this.finish('success-silence')
  }

  /** Removed by `uuid_record <uuid> stop <path>` while the leg is up (esl/48: `success-maxtime`). */
  stop(): Promise<void> {
    return this.finish('success-maxtime')
  }

  private async finish(completed: string): Promise<void> {
    this.stopCounting()
    // Whole 20 ms frames, as FreeSWITCH's media bug reads them.
    const samples = Math.floor(this.countedMs / FRAME_MS) * FRAME_SAMPLES
    const s = this.s
    let cause: string
    try {
      if (samples === 0) {
        // switch_ivr_async.c record_callback SWITCH_ABC_TYPE_CLOSE: "Discarding empty file".
        await this.file.close()
        await rm(this.path, { force: true })
        s.setVar('record_file_size', String(WAV_HEADER_BYTES))
        s.setVar('RECORD_DISCARDED', 'true')
        cause = 'empty-file'
      } else {
        s.setVar('record_file_size', String(await writeTone(this.file, this.channels, samples)))
        await this.file.close()
        cause = completed
      }
      s.setVar('record_samples', String(samples))
      s.setVar('record_seconds', String(Math.floor(samples / SAMPLE_RATE)))
      s.setVar('record_ms', String(Math.floor((samples * 1000) / SAMPLE_RATE)))
    } catch (e) {
      // A full disk while the file is written: "Error writing", uri-failure, RECORD_STOP all the same.
      await this.file.close().catch(() => undefined)
      this.sw.logger.error({ uuid: s.uuid, path: this.path, err: e }, 'sim: record_session: Error writing')
      cause = 'uri-failure'
    }
    s.setVar('record_completion_cause', cause)
    this.sw.bus.fire('RECORD_STOP', [...s.eventData(), ['Record-File-Path', this.path], ['Record-Completion-Cause', cause]])
  }
}

/** Makes the folders and opens the file with an empty header, or says why not (FreeSWITCH's log line). */
async function openRecording(path: string, channels: 1 | 2): Promise<{ file: FileHandle } | { error: string }> {
  try {
    await mkdir(dirname(path), { recursive: true })
  } catch {
    return { error: `Error creating ${dirname(path)}` }
  }
  let file: FileHandle
  try {
    file = await open(path, 'w')
  } catch {
    return { error: `Error opening ${path}` }
  }
  try {
    await file.write(wavHeader(channels, 0), 0, WAV_HEADER_BYTES, 0)
  } catch {
    await file.close().catch(() => undefined)
    return { error: `Error opening ${path}` }
  }
  return { file }
}

export async function recordSession(sw: Switch, s: Session, arg: string): Promise<void> {
  const [path] = separateString(arg.trim(), ' ')
  if (path === undefined || path === '') return
  // switch_channel_pre_answer: an inbound call not yet answered gets early media first.
  if (s.direction === 'inbound' && !s.answered) sw.preAnswer(s)
  await startRecording(sw, s, path)
}

/**
 * Puts a recording of `path` on the leg (switch_ivr_record_session), firing RECORD_START; false
 * when FreeSWITCH would refuse it (no media, that path already recorded, a file it cannot open).
 */
export async function startRecording(sw: Switch, s: Session, path: string): Promise<boolean> {
  if (!s.mediaUp) {
    sw.logger.warn({ uuid: s.uuid }, 'sim: record_session: Can not record session.  Media not enabled on channel')
    return false
  }
  if (recordingOf(s, path) !== undefined) {
    sw.logger.warn({ uuid: s.uuid, path }, 'sim: record_session: Already recording')
    return false
  }
  const channels = isTrue(s.getVar('RECORD_STEREO')) ? 2 : 1
  const opened = isAbsolute(path) ? await openRecording(path, channels) : { error: `Error opening ${path} (a relative path: the simulator has no base_dir)` }
  if ('error' in opened) {
    sw.logger.error({ uuid: s.uuid, path }, `sim: record_session: ${opened.error}`)
    s.setVar('record_completion_cause', 'uri-failure')
    return false
  }
  // FreeSWITCH does all of this on the channel's thread, before its hangup can be seen; here the
  // file was opened meanwhile, so a channel that hung up since gets no recording at all.
  if (!s.up) {
    await opened.file.close().catch(() => undefined)
    await rm(path, { force: true })
    return false
  }
  s.mediaBugs.push(new SessionRecording(sw, s, path, opened.file, channels, isTrue(s.getVar('RECORD_BRIDGE_REQ'))))
  sw.bus.fire('RECORD_START', [...s.eventData(), ['Record-File-Path', path]])
  return true
}

const recordingOf = (s: Session, path: string): SessionRecording | undefined =>
  s.mediaBugs.find((b): b is SessionRecording => b instanceof SessionRecording && b.path === path)

/** Ends the leg's recording of `path` (switch_ivr_stop_record_session), RECORD_STOP included; false when none records it. */
export async function stopRecording(s: Session, path: string): Promise<boolean> {
  const bug = recordingOf(s, path)
  if (bug === undefined) return false
  s.mediaBugs.splice(s.mediaBugs.indexOf(bug), 1)
  await bug.stop()
  return true
}
