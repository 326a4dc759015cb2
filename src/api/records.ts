/**
 * Which user or group the identifiers of a request name: the directory's part of the user_* and
 * group_* parameters, run after the schema parse. Several identifiers of one kind are allowed
 * when they all name the same record; one naming nothing is `*_not_found`; one naming several
 * records (a label) or two naming different records is `ambiguous_*`.
 *
 * Each value is checked against its identifier schema here too: the CTI hands in identifiers
 * from a WebSocket query that no request schema has seen.
 */
import { GROUP_KEYS, USER_KEYS, type DomainDirectory, type Group, type GroupKey, type User, type UserKey } from '../directory/directory.js'
import { apiError, type ApiError } from './errors.js'
import { identifierSchemas } from './schema/identifiers.js'
import { parseWith } from './schema/parse.js'
import { err, ok, type Result } from '../util/result.js'

export type Identifiers = Readonly<Record<string, unknown>>

interface RecordKind<R, K extends string> {
  readonly noun: 'user' | 'group'
  readonly lookup: (key: K, value: string) => readonly R[]
  readonly idOf: (r: R) => string
  readonly ambiguous: 'ambiguous_user' | 'ambiguous_group'
  readonly notFound: 'user_not_found' | 'group_not_found'
}

/**
 * The record the identifiers of one kind present in `given` name; `undefined` when none is
 * present. The description never repeats the value, and is the same whether the record exists
 * in another domain or nowhere.
 */
function resolveRecord<R, K extends UserKey | GroupKey>(given: Identifiers, keys: readonly K[], kind: RecordKind<R, K>): Result<R | undefined, ApiError> {
  let found: R | undefined
  let foundBy: K | undefined
  for (const key of keys) {
    if (!Object.hasOwn(given, key)) continue
    const value = parseWith(identifierSchemas[key], given[key], [key])
    if (!value.ok) return value
    const matches = kind.lookup(key, value.value)
    const first = matches[0]
    if (first === undefined) return err(apiError(kind.notFound, `${key} names no ${kind.noun} of this domain`))
    if (matches.length > 1) {
      return err(apiError(kind.ambiguous, `${key} matches ${matches.length} ${kind.noun}s; identify the ${kind.noun} by another parameter`))
    }
    if (found !== undefined && foundBy !== undefined && kind.idOf(found) !== kind.idOf(first)) {
      return err(apiError(kind.ambiguous, `${foundBy} and ${key} name different ${kind.noun}s`))
    }
    found = first
    foundBy = key
  }
  return ok(found)
}

export function resolveUser(given: Identifiers, domain: DomainDirectory, keys: readonly UserKey[] = USER_KEYS): Result<User | undefined, ApiError> {
  return resolveRecord<User, UserKey>(given, keys, {
    noun: 'user',
    lookup: (k, v) => domain.usersBy(k, v),
    idOf: (u) => u.id,
    ambiguous: 'ambiguous_user',
    notFound: 'user_not_found',
  })
}

export function resolveGroupRef(given: Identifiers, domain: DomainDirectory, keys: readonly GroupKey[] = GROUP_KEYS): Result<Group | undefined, ApiError> {
  return resolveRecord<Group, GroupKey>(given, keys, {
    noun: 'group',
    lookup: (k, v) => domain.groupsBy(k, v),
    idOf: (g) => g.id,
    ambiguous: 'ambiguous_group',
    notFound: 'group_not_found',
  })
}
