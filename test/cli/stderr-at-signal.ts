/**
 * Loaded into a `cod start` child by start-signals.test.ts (`--import`): at SIGTERM or SIGINT,
 * writes 300 KB to stderr (more than any pipe holds) and emits a warning, as Node itself would
 * on stderr during a shutdown. The daemon's own handlers are not touched: these run beside them.
 */
const writeStderr = (): void => {
  process.emitWarning('stderr-at-signal: a warning during the shutdown')
  process.stderr.write(`${'e'.repeat(300 * 1024)}\n`)
}
process.once('SIGTERM', writeStderr)
process.once('SIGINT', writeStderr)
