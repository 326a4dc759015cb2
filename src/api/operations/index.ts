/** The operations by the path segment that names them. */
import type { Operation } from '../../origination/plan.js'
import { callExternal } from './call-external.js'
import { callGroup } from './call-group.js'
import { callUser } from './call-user.js'
import type { OperationFn } from './common.js'
import { initiateCall } from './initiate-call.js'

export type { OperationFn } from './common.js'

export const OPERATIONS: Readonly<Record<Operation, OperationFn>> = {
  call_user: callUser,
  call_group: callGroup,
  call_external: callExternal,
  initiate_call: initiateCall,
}
