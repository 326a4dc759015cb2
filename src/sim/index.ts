/** The FreeSWITCH simulator (docs/simulator.md). */
export { Simulator, type SimulatorOptions, type SimChannelView } from './simulator.js'
export type { ExecutedApp } from './core.js'
export type { SimBehaviour } from '../config/schema.js'
