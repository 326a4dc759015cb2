/**
 * Entry point: `node dist/main.js [--config conf/daemon.yaml]`. Parses the arguments, starts
 * the daemon and turns signals into reload (SIGHUP) and graceful stop (SIGTERM, SIGINT).
 */
import { parseArgs } from 'node:util'
import { startDaemon } from './daemon.js'

const { values } = parseArgs({
  options: { config: { type: 'string', short: 'c', default: 'conf/daemon.yaml' }, help: { type: 'boolean', short: 'h' } },
})
if (values.help === true) {
  process.stdout.write('usage: node dist/main.js [--config conf/daemon.yaml]\n')
  process.exit(0)
}

const started = await startDaemon({ configFile: values.config ?? 'conf/daemon.yaml' })
if (!started.ok) {
  process.stderr.write(`configuration refused:\n${started.error.map((p) => `  ${p}`).join('\n')}\n`)
  process.exit(2)
}
const daemon = started.value
process.on('SIGHUP', () => void daemon.reload())
const shutdown = (signal: string) => {
  daemon.logger.info({ signal }, 'shutdown requested')
  daemon.stop().then(
    () => process.exit(0),
    (e: unknown) => {
      daemon.logger.error({ err: e }, 'shutdown failed')
      process.exit(1)
    },
  )
}
process.once('SIGTERM', () => shutdown('SIGTERM'))
process.once('SIGINT', () => shutdown('SIGINT'))
