/**
 * What an API command answers: its text (the api/response body, or the BACKGROUND_JOB body)
 * and what must run once that text is out.
 */
export interface ApiReply {
  readonly text: string
  /** Runs after the reply (or BACKGROUND_JOB) is out: the originated leg starts its application. */
  readonly after?: () => void
}

/** mod_commands.c's `-USAGE: <syntax>` reply. */
export const usage = (syntax: string): ApiReply => ({ text: `-USAGE: ${syntax}\n` })
