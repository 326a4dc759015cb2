/**
 * Simulated media time: a prompt lasts PROMPT_SEC (scaled like every simulated delay) and ends
 * early when the channel hangs up or the application is interrupted.
 */
import type { Switch } from '../core/switch.js'

/** Simulated length of one playback / speak prompt. */
export const PROMPT_SEC = 1

/** Waits for `seconds` of simulated time; false when the channel hung up or the app was interrupted. */
export const wait = (sw: Switch, seconds: number, signal: AbortSignal): Promise<boolean> => sw.clock.sleep(seconds, signal)
