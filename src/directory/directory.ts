/**
 * The directory: domains, users, groups and extensions, indexed for the lookups the API,
 * the dialplan and the directory documents make. Every lookup is scoped to one domain, so a
 * token of domain A can never name a record of domain B.
 */
import { isPstnNumber, type DomainConfig, type DomainRecordingConfig, type ExtensionConfig, type GroupConfig, type OwnRecordingConfig, type UserConfig } from '../config/schema.js'

export type User = UserConfig
export type Group = GroupConfig
export type Extension = ExtensionConfig
/** A domain's recording policy (always there: defaults never, 30 days) and a group's or user's own (optional). */
export type DomainRecording = DomainRecordingConfig
export type OwnRecording = OwnRecordingConfig

export const USER_KEYS = ['user_id', 'user_name', 'user_label', 'user_extension', 'user_did', 'user_email'] as const
export type UserKey = (typeof USER_KEYS)[number]
export const GROUP_KEYS = ['group_id', 'group_name', 'group_label', 'group_extension', 'group_did'] as const
export type GroupKey = (typeof GROUP_KEYS)[number]

/**
 * What a destination string names, in the order of docs/design.md "HTTP API decisions" (xml_url:
 * forms are handled by the API).
 */
export type DirectoryMatch =
  | { readonly kind: 'user'; readonly user: User }
  | { readonly kind: 'group'; readonly group: Group }
  | { readonly kind: 'extension'; readonly extension: Extension }
  | { readonly kind: 'pstn'; readonly number: string }

type Index<T> = Map<string, T[]>

function indexBy<T>(items: readonly T[], key: (t: T) => string | undefined): Index<T> {
  const index: Index<T> = new Map()
  for (const item of items) {
    const k = key(item)
    if (k === undefined) continue
    const norm = k.toLowerCase()
    const list = index.get(norm)
    if (list === undefined) index.set(norm, [item])
    else list.push(item)
  }
  return index
}

export class DomainDirectory {
  readonly name: string
  readonly config: DomainConfig
  private readonly users: Record<UserKey, Index<User>>
  private readonly groups: Record<GroupKey, Index<Group>>
  private readonly extensions: Map<string, Extension>
  private readonly groupsOfUser: Map<string, Group[]>
  private readonly membersOfGroup: Map<string, User[]>

  constructor(config: DomainConfig) {
    this.config = config
    this.name = config.name
    const u = config.users
    this.users = {
      user_id: indexBy(u, (x) => x.id),
      user_name: indexBy(u, (x) => x.name),
      user_label: indexBy(u, (x) => x.label),
      user_extension: indexBy(u, (x) => x.extension),
      user_did: indexBy(u, (x) => x.did),
      user_email: indexBy(u, (x) => x.email),
    }
    const g = config.groups
    this.groups = {
      group_id: indexBy(g, (x) => x.id),
      group_name: indexBy(g, (x) => x.name),
      group_label: indexBy(g, (x) => x.label),
      group_extension: indexBy(g, (x) => x.extension),
      group_did: indexBy(g, (x) => x.did),
    }
    this.extensions = new Map(config.extensions.map((x) => [x.number, x]))
    this.membersOfGroup = new Map()
    this.groupsOfUser = new Map(u.map((x) => [x.id, []]))
    for (const group of g) {
      const members = group.members.flatMap((m) => u.filter((x) => x.name === m || x.id === m).slice(0, 1))
      this.membersOfGroup.set(group.id, members)
      for (const member of members) this.groupsOfUser.get(member.id)?.push(group)
    }
  }

  /** All users matching one identifier (more than one only for labels, which need not be unique). */
  usersBy(key: UserKey, value: string): readonly User[] {
    return this.users[key].get(value.toLowerCase()) ?? []
  }

  groupsBy(key: GroupKey, value: string): readonly Group[] {
    return this.groups[key].get(value.toLowerCase()) ?? []
  }

  userByName(name: string): User | undefined {
    return this.usersBy('user_name', name)[0]
  }

  userById(id: string): User | undefined {
    return this.usersBy('user_id', id)[0]
  }

  groupById(id: string): Group | undefined {
    return this.groupsBy('group_id', id)[0]
  }

  /**
   * A user by SIP username: the name, or the extension as a number-alias (docs/design.md
   * "Configuration contract", SIP accounts).
   */
  userBySipName(sipUser: string): User | undefined {
    return this.userByName(sipUser) ?? this.usersBy('user_extension', sipUser)[0]
  }

  /** Members in hunt order. */
  members(group: Group): readonly User[] {
    return this.membersOfGroup.get(group.id) ?? []
  }

  /** Groups of a user in configuration order. */
  groupsOf(user: User): readonly Group[] {
    return this.groupsOfUser.get(user.id) ?? []
  }

  /** `group_resolver`: "*" is the first group of the user, "any:CALL_CENTER" the first call-center group. */
  resolveGroup(user: User, resolver: '*' | 'any:CALL_CENTER'): Group | undefined {
    const groups = this.groupsOf(user)
    return resolver === '*' ? groups[0] : groups.find((g) => g.type === 'CALL_CENTER')
  }

  extension(number: string): Extension | undefined {
    return this.extensions.get(number)
  }

  hasPrivilege(privilege: DomainConfig['privileges'][number]): boolean {
    return this.config.privileges.includes(privilege)
  }

  mayPresent(number: string): boolean {
    return this.config.calling_numbers.includes(number)
  }

  /**
   * Resolves a destination string in the order of docs/design.md "HTTP API decisions": a user
   * (name, extension, DID); a group (name, extension, DID); a configured extension; a PSTN number.
   * `undefined` when nothing matches.
   */
  resolveDestination(destination: string): DirectoryMatch | undefined {
    for (const key of ['user_name', 'user_extension', 'user_did'] as const) {
      const user = this.usersBy(key, destination)[0]
      if (user !== undefined) return { kind: 'user', user }
    }
    for (const key of ['group_name', 'group_extension', 'group_did'] as const) {
      const group = this.groupsBy(key, destination)[0]
      if (group !== undefined) return { kind: 'group', group }
    }
    const extension = this.extension(destination)
    if (extension !== undefined) return { kind: 'extension', extension }
    if (isPstnNumber(destination)) return { kind: 'pstn', number: destination }
    return undefined
  }
}

export class Directory {
  private readonly domains: Map<string, DomainDirectory>

  constructor(domains: readonly DomainConfig[]) {
    this.domains = new Map(domains.map((d) => [d.name.toLowerCase(), new DomainDirectory(d)]))
  }

  domain(name: string): DomainDirectory | undefined {
    return this.domains.get(name.toLowerCase())
  }

  all(): IterableIterator<DomainDirectory> {
    return this.domains.values()
  }
}
