/**
 * Entry point of the standalone FreeSWITCH simulator: `node dist/sim/main.js --config <daemon.yaml>`
 * (usage: `--help`; the program itself is runSimulator in run.ts, which a `cod simulator` command
 * can call too).
 */
import { runSimulator } from './run.js'

process.exitCode = await runSimulator(process.argv.slice(2))
