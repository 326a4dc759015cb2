/**
 * The operations by the path segment that names them, and their request schemas (each one's
 * own folder holds `schema.ts`, the single source of its rules, and `operation.ts`, what needs
 * the directory). REQUEST_SCHEMAS is what an OpenAPI document is generated from
 * (`z.toJSONSchema(schema, { io: 'input' })`: a request is described as clients write it).
 */
import type { z } from 'zod'
import type { Operation } from '../../origination/plan.js'
import { callExternal } from './call-external/operation.js'
import { callExternalSchema } from './call-external/schema.js'
import { callGroup } from './call-group/operation.js'
import { callGroupSchema } from './call-group/schema.js'
import { callUser } from './call-user/operation.js'
import { callUserSchema } from './call-user/schema.js'
import type { OperationFn } from './common.js'
import { initiateCall } from './initiate-call/operation.js'
import { initiateCallSchema } from './initiate-call/schema.js'

export type { OperationFn } from './common.js'

export const OPERATIONS: Readonly<Record<Operation, OperationFn>> = {
  call_user: callUser,
  call_group: callGroup,
  call_external: callExternal,
  initiate_call: initiateCall,
}

export const REQUEST_SCHEMAS: Readonly<Record<Operation, z.ZodType>> = {
  call_user: callUserSchema,
  call_group: callGroupSchema,
  call_external: callExternalSchema,
  initiate_call: initiateCallSchema,
}
