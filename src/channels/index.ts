/**
 * The live-channel model: one table of FreeSWITCH's live channels, fed once by the ESL events
 * and the re-read after every (re)connection, read by origination and CTI. What other folders
 * may use of it; the rest of this folder is its inside.
 */
export { createChannelModel, type ChannelModel, type ChannelModelDeps } from './model.js'
export type { ResyncToken, StoreOptions } from './store.js'
/** @internal Exported for tests: test/channels and test/cti drive a store without a model. */
export { ChannelStore } from './store.js'
export type { ReadBackVars, ResyncRow } from './reconcile.js'
/** @internal Exported for tests: test/cti checks the end-user form. */
export { endUserOf } from './end-user.js'
export type { CallDirection, ChangeKind, ChannelChange, ChannelDirectory, ChannelRecord, ChannelState } from './types.js'
