/** Structured JSON logs (pino): one place decides the format so every part logs alike. */
import { pino, type Logger, type LevelWithSilent } from 'pino'

export type { Logger }

export const createLogger = (level: LevelWithSilent, destination?: NodeJS.WritableStream): Logger =>
  destination === undefined ? pino({ level, base: { svc: 'cod' } }) : pino({ level, base: { svc: 'cod' } }, destination)

/** A logger that writes nothing: tests that do not assert on logs. */
export const silentLogger = (): Logger => pino({ level: 'silent' })
