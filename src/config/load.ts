/**
 * Loads and validates the daemon file, the per-domain directory files and the certificate and
 * key `http.tls` names (src/net/tls.ts).
 * A bad file never half-loads: the result is either a complete configuration or the list of
 * problems, each naming the file, the path inside it and the reason.
 */
import { readFile, readdir } from 'node:fs/promises'
import { dirname, join, resolve, basename } from 'node:path'
import { parseDocument } from 'yaml'
import type { z } from 'zod'
import { daemonSchema, domainSchema, type DaemonConfig, type DomainConfig } from './schema.js'
import { readTlsCredentials, type TlsCredentials } from '../net/tls.js'
import { err, ok, type Result } from '../util/result.js'

export interface ConfigProblem {
  readonly file: string
  /** Path inside the file, e.g. `users[2].extension`; empty for the whole file. */
  readonly path: string
  readonly reason: string
}

export interface LoadedConfig {
  readonly file: string
  readonly daemon: DaemonConfig
  readonly domains: readonly DomainConfig[]
  /** `http.tls`'s certificate and key, read and checked as a pair (absent: plain HTTP). */
  readonly tls?: TlsCredentials
}

export const formatProblem = (p: ConfigProblem): string =>
  `${p.file}${p.path === '' ? '' : `: ${p.path}`}: ${p.reason}`

const formatPath = (path: readonly PropertyKey[]): string =>
  path.reduce<string>((acc, seg) => (typeof seg === 'number' ? `${acc}[${seg}]` : acc === '' ? String(seg) : `${acc}.${String(seg)}`), '')

async function parseYamlFile(file: string): Promise<Result<unknown, ConfigProblem[]>> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (e) {
    return err([{ file, path: '', reason: `cannot read: ${(e as NodeJS.ErrnoException).code ?? String(e)}` }])
  }
  // maxAliasCount guards against alias bombs ("billion laughs") in operator-edited YAML.
  const doc = parseDocument(text, { uniqueKeys: true, prettyErrors: false })
  if (doc.errors.length > 0) {
    return err(doc.errors.map((e) => ({ file, path: '', reason: `YAML: ${e.message}` })))
  }
  try {
    return ok(doc.toJS({ maxAliasCount: 100 }))
  } catch (e) {
    return err([{ file, path: '', reason: `YAML: ${(e as Error).message}` }])
  }
}

function validate<S extends z.ZodType>(schema: S, file: string, raw: unknown): Result<z.infer<S>, ConfigProblem[]> {
  const parsed = schema.safeParse(raw ?? {})
  if (parsed.success) return ok(parsed.data)
  return err(parsed.error.issues.map((i) => ({ file, path: formatPath(i.path), reason: i.message })))
}

/** Checks that need the whole domain: uniqueness of keys and group members that exist. */
function crossCheckDomain(file: string, d: DomainConfig, expectedName?: string): ConfigProblem[] {
  const problems: ConfigProblem[] = []
  const add = (path: string, reason: string) => problems.push({ file, path, reason })
  if (expectedName !== undefined && d.name !== expectedName) {
    add('name', `must equal the file name "${expectedName}"`)
  }
  const unique = (label: string) => {
    const seen = new Map<string, string>()
    return (value: string | undefined, path: string) => {
      if (value === undefined) return
      const key = value.toLowerCase()
      const first = seen.get(key)
      if (first !== undefined) add(path, `${label} "${value}" is already used at ${first}`)
      else seen.set(key, path)
    }
  }
  const userIds = unique('user id')
  const groupIds = unique('group id')
  const names = unique('name')
  const numbers = unique('number')
  const emails = unique('e-mail')
  d.users.forEach((u, i) => {
    userIds(u.id, `users[${i}].id`)
    names(u.name, `users[${i}].name`)
    numbers(u.extension, `users[${i}].extension`)
    numbers(u.did, `users[${i}].did`)
    emails(u.email, `users[${i}].email`)
  })
  d.groups.forEach((g, i) => {
    groupIds(g.id, `groups[${i}].id`)
    names(g.name, `groups[${i}].name`)
    numbers(g.extension, `groups[${i}].extension`)
    numbers(g.did, `groups[${i}].did`)
    const memberSeen = new Set<string>()
    g.members.forEach((m, j) => {
      const user = d.users.find((u) => u.name === m || u.id === m)
      if (user === undefined) add(`groups[${i}].members[${j}]`, `no user named "${m}" in this domain`)
      else if (memberSeen.has(user.id)) add(`groups[${i}].members[${j}]`, `"${m}" is listed twice`)
      else memberSeen.add(user.id)
    })
  })
  d.extensions.forEach((x, i) => numbers(x.number, `extensions[${i}].number`))
  d.calling_numbers.forEach((n, i) => {
    if (d.calling_numbers.indexOf(n) !== i) add(`calling_numbers[${i}]`, `"${n}" is listed twice`)
  })
  return problems
}

/**
 * `http.tls`'s files, relative to daemon.yaml's folder like every other path of it. Read at each
 * load: a reload (SIGHUP) after a renewal takes the new pair, or refuses it and keeps the running one.
 */
async function loadTls(file: string, daemon: DaemonConfig): Promise<Result<TlsCredentials | undefined, ConfigProblem[]>> {
  const tls = daemon.http.tls
  if (tls === undefined) return ok(undefined)
  const read = await readTlsCredentials({ certFile: resolve(dirname(file), tls.cert_file), keyFile: resolve(dirname(file), tls.key_file) })
  if (!read.ok) return err([{ file, path: `http.tls.${read.error.file}`, reason: read.error.reason }])
  return read
}

export async function loadConfig(configFile: string): Promise<Result<LoadedConfig, ConfigProblem[]>> {
  const file = resolve(configFile)
  const raw = await parseYamlFile(file)
  if (!raw.ok) return raw
  const daemon = validate(daemonSchema, file, raw.value)
  if (!daemon.ok) return daemon
  const tls = await loadTls(file, daemon.value)
  if (!tls.ok) return tls

  const dir = resolve(dirname(file), daemon.value.directory)
  let entries: string[]
  try {
    entries = (await readdir(dir)).filter((f) => /\.ya?ml$/.test(f)).sort()
  } catch (e) {
    return err([{ file, path: 'directory', reason: `cannot read folder ${dir}: ${(e as NodeJS.ErrnoException).code ?? String(e)}` }])
  }
  if (entries.length === 0) return err([{ file, path: 'directory', reason: `no *.yaml domain files in ${dir}` }])

  const problems: ConfigProblem[] = []
  const domains: DomainConfig[] = []
  for (const entry of entries) {
    const domainFile = join(dir, entry)
    const rawDomain = await parseYamlFile(domainFile)
    if (!rawDomain.ok) {
      problems.push(...rawDomain.error)
      continue
    }
    const domain = validate(domainSchema, domainFile, rawDomain.value)
    if (!domain.ok) {
      problems.push(...domain.error)
      continue
    }
    const cross = crossCheckDomain(domainFile, domain.value, basename(entry).replace(/\.ya?ml$/, ''))
    if (cross.length > 0) problems.push(...cross)
    else domains.push(domain.value)
  }
  const seen = new Set<string>()
  for (const d of domains) {
    if (seen.has(d.name.toLowerCase())) problems.push({ file: dir, path: '', reason: `domain ${d.name} is defined twice` })
    seen.add(d.name.toLowerCase())
  }
  if (problems.length > 0) return err(problems)
  return ok({ file, daemon: daemon.value, domains, ...(tls.value !== undefined ? { tls: tls.value } : {}) })
}
