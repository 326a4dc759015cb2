/** Shared by the journal tests: a temp folder removed at teardown, a log capture, record builders. */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import type { Test } from 'tap'
import { createLogger, type Logger } from '../../src/util/logger.js'
import type { AcceptedRequest, ResultRecord } from '../../src/journal/types.js'

export function tempDir(t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'journal-test-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

export interface Logs {
  readonly logger: Logger
  readonly lines: Array<Record<string, unknown>>
}

export function captureLogs(): Logs {
  const lines: Array<Record<string, unknown>> = []
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const l of chunk.toString('utf8').split('\n')) if (l !== '') lines.push(JSON.parse(l) as Record<string, unknown>)
      cb()
    },
  })
  return { logger: createLogger('debug', sink), lines }
}

export const accepted = (i: number, extra: Partial<AcceptedRequest> = {}): AcceptedRequest => ({
  requestId: `req-${i}`,
  domain: 'example.test',
  operation: 'call_user',
  uuids: [`00000000-0000-4000-8000-${String(i).padStart(12, '0')}`],
  callbackUrl: 'https://app.example.test/cb',
  answerDeadlineAt: 1_700_000_060_000,
  ...extra,
})

export const resultOf = (i: number, extra: Partial<ResultRecord> = {}): ResultRecord => ({
  deliveryId: `delivery-${i}`,
  requestId: `req-${i}`,
  domain: 'example.test',
  url: 'https://app.example.test/cb',
  body: `{"result_code":0,"uuid":"00000000-0000-4000-8000-${String(i).padStart(12, '0')}"}`,
  createdAt: 1_700_000_000_000,
  ...extra,
})
