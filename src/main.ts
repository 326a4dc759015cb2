/**
 * The daemon's former entry point, `node dist/main.js [--config conf/daemon.yaml]`, kept for
 * deployments that still start it and for the fault tests that do: it is
 * `cod start` (src/cli/start.ts), the one path from a command line to the daemon.
 */
import { processIo } from './cli/io.js'
import { runStart } from './cli/start.js'

const code = await runStart(process.argv.slice(2), processIo())
// The exit is explicit: sockets of a stopped daemon could otherwise hold the loop a moment.
process.exit(code)
