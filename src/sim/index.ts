/** The FreeSWITCH simulator (docs/simulator.md). */
export { Simulator, type SimulatorOptions } from './simulator.js'
export type { SimChannelView } from './channel-view.js'
export type { ExecutedApp } from './core/switch.js'
export type { SimBehaviour } from '../config/schema.js'
