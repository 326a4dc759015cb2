/**
 * The one place where a zod issue becomes an API error. The request schemas state every rule
 * in their messages; this picks the issue the client hears about first and words it the way
 * the API always has: `<parameter>: <rule>`, `<parameter> is required`,
 * `<parameter>: unknown parameter`. Parameters are named by their path (`target.end_user.name`).
 *
 * Which issue comes first:
 * - zod reports a schema's fields in the order they are declared, so schemas declare their
 *   fields in the order the rules should be heard;
 * - an object's unknown keys come before anything about its fields (a typo is the likelier
 *   cause of everything else), although zod reports them after the fields;
 * - a value that failed every branch of a union is explained by the branch of its own JSON
 *   type (an object by the object form), else by the union's own message.
 *
 * Absent and present are told apart on the raw input: a required field that is absent is
 * `missing_parameter`; `null` is a value of the wrong type (`invalid_parameter`), so that a
 * client bug never silently turns into a default.
 */
import type { z } from 'zod'
import { apiError, type ApiError, type ApiErrorId } from '../errors.js'
import { err, ok, type Result } from '../../util/result.js'

type Issue = z.core.$ZodIssue
type Path = readonly PropertyKey[]

/**
 * The `params` of a custom issue whose error id is not invalid_parameter:
 * `ctx.addIssue({ code: 'custom', message, params: errorIdParams('missing_parameter') })`.
 */
export const errorIdParams = (id: ApiErrorId): { readonly apiErrorId: ApiErrorId } => ({ apiErrorId: id })

const pathText = (path: Path): string => path.map(String).join('.')

/** `<parameter>: <rule>`; the rule alone for the body itself. */
const describeAt = (path: Path, rule: string): string => (path.length === 0 ? rule : `${pathText(path)}: ${rule}`)

const startsWith = (path: Path, prefix: Path): boolean => prefix.length <= path.length && prefix.every((k, i) => path[i] === k)

/** Whether the last key of `path` is absent from its (present) parent object in the raw input. */
function isAbsent(input: unknown, path: Path): boolean {
  let node: unknown = input
  for (const [i, key] of path.entries()) {
    if (typeof node !== 'object' || node === null) return false
    if (!Object.hasOwn(node, key)) return i === path.length - 1
    node = (node as Record<PropertyKey, unknown>)[key]
  }
  return false
}

interface Located {
  readonly issue: Issue
  /** The issue's path from the parsed input (union branches report theirs from the union). */
  readonly path: Path
}

function firstIssue(issues: readonly Issue[], prefix: Path): Located | undefined {
  const located = issues.map((issue) => ({ issue, path: [...prefix, ...issue.path] }))
  let chosen = located[0]
  if (chosen === undefined) return undefined
  // The outermost object on the way to the chosen issue that has unknown keys is refused first.
  for (const l of located) {
    if (l.issue.code === 'unrecognized_keys' && startsWith(chosen.path, l.path) && (chosen.issue.code !== 'unrecognized_keys' || l.path.length < chosen.path.length)) {
      chosen = l
    }
  }
  if (chosen.issue.code === 'invalid_union') {
    // A branch whose own type matched the value (no invalid_type at the union itself) explains it.
    const matching = chosen.issue.errors.filter((branch) => branch.length > 0 && !branch.some((i) => i.code === 'invalid_type' && i.path.length === 0))
    const [only] = matching
    if (only !== undefined && matching.length === 1) return firstIssue(only, chosen.path) ?? chosen
  }
  return chosen
}

/**
 * The ApiError for a failed parse of `input`. `at` names where `input` sits in the request
 * (empty for the body; `['timeout']` for one field checked on its own).
 */
function apiErrorOf(issues: readonly Issue[], input: unknown, at: Path = []): ApiError {
  const first = firstIssue(issues, [])
  if (first === undefined) return apiError('invalid_parameter', describeAt(at, 'is invalid'))
  const { issue, path } = first
  const shown = [...at, ...path]
  if (issue.code === 'unrecognized_keys') return apiError('invalid_parameter', `${pathText([...shown, issue.keys[0] ?? ''])}: unknown parameter`)
  const id = issue.code === 'custom' ? (issue.params as { apiErrorId?: ApiErrorId } | undefined)?.apiErrorId : undefined
  if (id !== undefined) return apiError(id, describeAt(shown, issue.message))
  // An absent optional field raises nothing: an issue about an absent field means it is required.
  if (path.length > 0 && isAbsent(input, path)) return apiError('missing_parameter', `${pathText(shown)} is required`)
  return apiError('invalid_parameter', describeAt(shown, issue.message))
}

/** Parses `input` with `schema`: its output, or the ApiError of its first issue. */
export function parseWith<S extends z.ZodType>(schema: S, input: unknown, at: Path = []): Result<z.output<S>, ApiError> {
  const r = schema.safeParse(input)
  return r.success ? ok(r.data) : err(apiErrorOf(r.error.issues, input, at))
}
