/**
 * Import rules for src/, checked by dependency-cruiser in `npm run lint` (and so in CI).
 *
 * Why: imports must flow one way. A circle, even between type-only imports, means two modules
 * cannot be understood, tested or moved apart, so every circle is an error. The bottom folders
 * (util, net, channels, pbx) are shared by everything above them: they must never reach up into
 * the parts that use them (the API, CTI, the origination engine).
 *
 * `tsPreCompilationDeps: true` makes type-only imports count: TypeScript erases them, but they
 * tie the modules together all the same.
 */
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
    {
      name: 'bottom-does-not-import-top',
      severity: 'error',
      comment: 'util, net, channels and pbx are below the API, CTI and the origination engine: they must not import them.',
      from: { path: '^src/(util|net|channels|pbx)/' },
      to: { path: '^src/(api|cti|origination)/' },
    },
    {
      name: 'prom-client-only-in-metrics',
      severity: 'error',
      comment: 'Only src/metrics/ knows Prometheus: the parts report through small interfaces of their own (docs/operations.md "Metrics").',
      from: { path: '^src/', pathNot: '^src/metrics/' },
      to: { path: '(^|/)node_modules/prom-client/' },
    },
    {
      name: 'metrics-only-from-daemon',
      severity: 'error',
      comment: 'src/metrics/ is wired by the composition root alone, so no part depends on the metrics.',
      from: { path: '^src/', pathNot: '^src/(metrics/|daemon\\.ts$)' },
      to: { path: '^src/metrics/' },
    },
    {
      name: 'redis-only-in-cluster',
      severity: 'error',
      comment: 'Only src/cluster/ knows Redis: a single node (no cluster section) never loads it (docs/cluster.md).',
      from: { path: '^src/', pathNot: '^src/cluster/' },
      to: { path: '(^|/)node_modules/ioredis/' },
    },
    {
      name: 'cluster-only-from-daemon',
      severity: 'error',
      comment: 'src/cluster/ is loaded by the composition root alone (a dynamic import, with a cluster section only); the parts see it through their own interfaces (SharedLimit...).',
      from: { path: '^src/', pathNot: '^src/(cluster/|daemon\\.ts$)' },
      to: { path: '^src/cluster/' },
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
