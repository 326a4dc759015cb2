#!/usr/bin/env node
/**
 * The `cod` command (package.json `bin`): one entry point for the daemon and its tools; the
 * subcommands are in commands.ts. The process exits with the command's code once it is done
 * (a stopped daemon's or simulator's sockets could otherwise hold the loop a moment).
 */
import { runCod } from './commands.js'
import { processIo } from './io.js'

process.exit(await runCod(process.argv.slice(2), processIo()))
