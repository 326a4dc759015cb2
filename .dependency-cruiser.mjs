/**
 * Import rules for src/, checked by dependency-cruiser in `npm run lint` (and so in CI); the same
 * rules, written out, are docs/architecture.md "Imports flow one way".
 *
 * Why: imports must flow one way. A circle, even between type-only imports, means two modules
 * cannot be understood, tested or moved apart, so every circle is an error. And each part of
 * src/ may import only the parts below it: LAYERS says, folder by folder, which ones. Each folder
 * of LAYERS may import the folders to its left and no other; each of SIDE_PARTS only what it
 * lists, and is imported only by the parts it names. A folder named in neither is an error, so a
 * new part is placed (here and in the docs) before it grows. test/architecture/imports.test.ts
 * runs these rules over a small tree with one wrong import of each kind.
 *
 * `tsPreCompilationDeps: true` makes type-only imports count: TypeScript erases them, but they
 * tie the modules together all the same.
 */

/** From the bottom up: a folder may import only the folders to its left. */
const LAYERS = ['util', 'net', 'config', 'directory', 'runtime', 'pbx', 'channels', 'xmlcurl', 'ivr', 'origination', 'callbacks', 'api', 'cti']

/**
 * The parts beside the layers. `imports`: what they may import (`types`: type-only imports
 * allowed from these as well); `usedBy`: which parts may import them (daemon.ts, the composition
 * root, may import every part but cli).
 */
const SIDE_PARTS = {
  journal: { imports: ['util'], usedBy: ['config', 'callbacks', 'api', 'cluster', 'cli'] },
  recording: { imports: ['util', 'config', 'directory'], usedBy: ['xmlcurl', 'api'] },
  sim: { imports: ['util', 'config'], usedBy: ['cli'] },
  metrics: { imports: ['util'], types: [...LAYERS], usedBy: [] },
  cluster: { imports: [...LAYERS.filter((l) => l !== 'cti'), 'cti/peers.ts', 'journal'], usedBy: [] },
  ui: { imports: ['util'], usedBy: [] },
  cli: { imports: ['util', 'config', 'runtime', 'ivr', 'journal', 'sim', 'daemon.ts'], types: ['origination'], usedBy: ['main.ts'] },
}

/** `api` → `^src/api/`, `daemon.ts` → `^src/daemon\.ts$`, `cti/peers.ts` → `^src/cti/peers\.ts$`. */
const pathOf = (part) => (part.endsWith('.ts') ? `^src/${part.replace(/\./g, '\\.')}$` : `^src/${part}/`)
const anyOf = (parts) => parts.map(pathOf).join('|')

/** What each folder may import (besides itself and node_modules). */
const allowedImports = (part) => {
  const usedBy = Object.entries(SIDE_PARTS)
    .filter(([, side]) => side.usedBy.includes(part))
    .map(([name]) => name)
  const left = LAYERS.includes(part) ? LAYERS.slice(0, LAYERS.indexOf(part)) : SIDE_PARTS[part].imports
  return [...left, ...usedBy]
}

const layerRules = [...LAYERS, ...Object.keys(SIDE_PARTS)].flatMap((part) => {
  const allowed = [part, ...allowedImports(part)]
  const types = SIDE_PARTS[part]?.types ?? []
  const rules = [
    {
      name: `layers-${part}`,
      severity: 'error',
      comment: `src/${part}/ may import only ${allowedImports(part).join(', ') || 'nothing of src/'}${types.length > 0 ? ` (types: also ${types.join(', ')})` : ''} (docs/architecture.md "Imports flow one way").`,
      from: { path: pathOf(part) },
      to: { path: '^src/', pathNot: anyOf([...allowed, ...types]) },
    },
  ]
  if (types.length > 0)
    rules.push({
      name: `layers-${part}-types-only`,
      severity: 'error',
      comment: `src/${part}/ may import only types from ${types.join(', ')}.`,
      from: { path: pathOf(part) },
      to: { path: anyOf(types.filter((t) => !allowed.includes(t))), dependencyTypesNot: ['type-only'] },
    })
  return rules
})

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Imports flow one way: a module must not import, directly or through others, a module that imports it.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'no-circular-folders',
      severity: 'error',
      comment: 'The same between the parts of src/: a folder must not import, directly or through others, a folder that imports it.',
      scope: 'folder',
      from: { path: '^src/' },
      to: { circular: true },
    },
    ...layerRules,
    {
      name: 'part-not-placed',
      severity: 'error',
      comment: 'Every folder of src/ is placed in LAYERS or SIDE_PARTS (and in docs/architecture.md), so that the rules above say what it may import.',
      from: { path: '^src/[^/]+/', pathNot: anyOf([...LAYERS, ...Object.keys(SIDE_PARTS)]) },
      to: {},
    },
    {
      name: 'daemon-not-from-parts',
      severity: 'error',
      comment: 'daemon.ts composes the parts; it is imported only by the programs that start it (cli, demo.ts), never by a part.',
      from: { path: '^src/', pathNot: '^src/(cli/|demo\\.ts$)' },
      to: { path: '^src/daemon\\.ts$' },
    },
    {
      name: 'cli-only-from-main',
      severity: 'error',
      comment: 'The cod command is above everything: only main.ts runs it.',
      from: { path: '^src/', pathNot: '^src/(cli/|main\\.ts$)' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'esl-socket-only-in-the-link',
      severity: 'error',
      comment: 'Only the link (pbx/connection.ts over pbx/esl-session.ts) writes to the Event Socket: its session, its framing of commands and its reader are reached by nothing else (docs/architecture.md "Who owns what").',
      from: { path: '^src/', pathNot: '^src/pbx/(connection|esl-session|esl-reader)\\.ts$' },
      to: { path: '^src/pbx/(esl-session|outgoing|esl-reader|esl-framing)\\.ts$' },
    },
    {
      name: 'prom-client-only-in-metrics',
      severity: 'error',
      comment: 'Only src/metrics/ knows Prometheus: the parts report through small interfaces of their own (docs/operations.md "Metrics").',
      from: { path: '^src/', pathNot: '^src/metrics/' },
      to: { path: '(^|/)node_modules/prom-client/' },
    },
    {
      name: 'redis-only-in-cluster',
      severity: 'error',
      comment: 'Only src/cluster/ knows Redis: a single node (no cluster section) never loads it (docs/cluster.md).',
      from: { path: '^src/', pathNot: '^src/cluster/' },
      to: { path: '(^|/)node_modules/ioredis/' },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import that resolves to nothing is a typo or a missing dependency.',
      from: { path: '^src/' },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // node_modules stays in the graph (not followed) so that rules can name packages (prom-client).
    exclude: { path: '^dist/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
    reporterOptions: {
      text: { highlightFocused: true },
    },
  },
}
