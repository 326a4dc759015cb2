/**
 * What the IVR needs of the daemon's other parts for `<Record>` and `<GetInput>`, typed here so
 * that the IVR imports neither the recording store nor the configuration's types
 * (docs/architecture.md "Imports flow one way": the recording part is not the IVR's to import;
 * `daemon.ts` plugs the store in, and its `RecordingStore` has this shape).
 */
import type { Result } from '../util/result.js'

/** The recording store's calls a Record makes (src/recording/types.ts RecordingStore). */
export interface IvrRecordingStore {
  recordingFile(domain: string, id: string): Result<string, string>
  begin(b: {
    readonly id: string
    readonly requestId: string
    readonly domain: string
    readonly legs: readonly string[]
    readonly startedAt: number
  }): Promise<Result<{ readonly id: string }, string>>
  complete(id: string, facts?: { readonly durationMs?: number }): Promise<Result<{ readonly status: string; readonly durationMs?: number }, string>>
  remove(domain: string, id: string): Promise<boolean>
}

/** One recording a Record makes: the store's id, the file FreeSWITCH writes, the API path of its audio. */
export interface RecordingTarget {
  readonly id: string
  readonly path: string
  readonly url: string
}

/** daemon.yaml `ivr.asr` with an engine: what play_and_detect_speech is given. */
export interface AsrSettings {
  readonly engine: string
  readonly grammar: string
  readonly params: Readonly<Record<string, string>>
}
