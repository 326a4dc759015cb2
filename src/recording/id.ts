/**
 * Recording ids: made by the daemon (the API, when the policy says a call is recorded), never
 * taken from a request, and the file names of a recording (`<id>.wav`, `<id>.json`).
 */
import { randomUUID } from 'node:crypto'

/** A lower-case UUID, as randomUUID makes them. */
export const RECORDING_ID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

export const newRecordingId = (): string => randomUUID()

export const isRecordingId = (s: string): boolean => RECORDING_ID_RE.test(s)
