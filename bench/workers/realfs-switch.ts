/**
 * The real FreeSWITCH 1.10.12 of the realfs benchmark (bench/realfs.ts) and the SIP phones that
 * answer its calls, in a process of their own so that neither shares an event loop with the
 * daemon or the load generator. It reuses the real-switch lane's parts: the deploy guide's
 * freeswitch/prepare-conf.sh, test/realfs/world.ts (fs.sh, stopping by PID) and
 * test/realfs/phones.ts (npm `sip` phones and carrier).
 *
 * Only one real FreeSWITCH may run on the machine at a time: the worker holds /tmp/realfs.lock
 * (flock, as `flock /tmp/realfs.lock npm run test:realfs` does) from before FreeSWITCH starts
 * until it is stopped; a child `flock ... cat` holds it, and lets go when this process ends
 * (its stdin closes), however it ends.
 */
import { execFile, spawn } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { freePort, FS_SH, ROOT, stopFreeswitch } from '../../test/realfs/world.js'
import { startPhones, type PhoneFarm, type PhoneUser } from '../../test/realfs/phones.js'
import type { SimBehaviour } from '../../src/config/schema.js'
import { processCpuMs } from '../lib/procfs.js'
import { args, num, ready, serve, str } from './rpc.js'

const run = promisify(execFile)
const LOCK = '/tmp/realfs.lock'

async function holdLock(): Promise<() => void> {
  const holder = spawn('flock', [LOCK, 'sh', '-c', 'echo locked; exec cat'], { stdio: ['pipe', 'pipe', 'inherit'] })
  await new Promise<void>((resolve, reject) => {
    holder.stdout.once('data', () => resolve())
    holder.once('exit', (code) => reject(new Error(`flock ${LOCK} ended (${String(code)})`)))
  })
  return () => holder.stdin.end()
}

const release = await holdLock()
const dir = str('dir')
const conf = join(dir, 'fs-conf')
const state = join(dir, 'fs-state')
const eslPort = num('eslPort')
const sipPort = num('sipPort')
const carrierPort = num('carrierPort')
const rtpBase = num('rtpBase')
await run('bash', [
  join(ROOT, 'freeswitch/prepare-conf.sh'),
  '--vanilla', join((await run('bash', [FS_SH, 'home'])).stdout.trim(), 'conf-vanilla'), '--out', conf, '--domain', str('domain'),
  '--esl-password', str('eslPassword'), '--esl-port', String(eslPort),
  '--xml-curl-url', `http://127.0.0.1:${num('xmlCurlPort')}/freeswitch/xml_curl`, '--xml-curl-credentials', `freeswitch:${str('xmlCurlPassword')}`,
  '--external-ip', '127.0.0.1', '--local-ip', '127.0.0.1', '--sip-port', String(sipPort),
  '--rtp-ports', `${rtpBase}-${rtpBase + 2000}`, '--carrier', `127.0.0.2:${carrierPort}`,
])
// Vanilla FreeSWITCH creates at most 30 sessions per second (switch.conf.xml sessions-per-second)
// and fails the rest with DESTINATION_OUT_OF_ORDER: 15 two-leg calls a second. A box meant for
// hundreds of setups a second raises it; so does the benchmark.
const switchConf = join(conf, 'autoload_configs', 'switch.conf.xml')
writeFileSync(switchConf, readFileSync(switchConf, 'utf8').replace(/(name="sessions-per-second" value=")\d+"/, (_m, head: string) => `${head}1000"`))
await run('bash', [FS_SH, 'start', conf, state], { env: { ...process.env, FS_ESL_PORT: String(eslPort) } })
const pid = Number(readFileSync(join(state, 'run/freeswitch.pid'), 'utf8').trim())

/** utime + stime of the FreeSWITCH process, in ms (bench/lib/procfs.ts). */
const fsCpuMs = (): number => processCpuMs(pid)

let phones: PhoneFarm | undefined
serve(
  {
    phones: async () => {
      phones = await startPhones({
        domain: str('domain'),
        server: { host: '127.0.0.1', port: sipPort },
        users: args['users'] as PhoneUser[],
        pstn: args['pstn'] as Record<string, SimBehaviour>,
        carrier: { address: '127.0.0.2', port: carrierPort },
        ports: (address) => freePort(address),
      })
      return true
    },
    cpu: () => ({ freeswitch_ms: fsCpuMs() }),
  },
  async () => {
    await phones?.stop()
    await stopFreeswitch(state)
    release()
  },
)
process.on('exit', () => {
  try {
    process.kill(pid, 'SIGKILL')
  } catch {
    // stopped already
  }
})
await ready({ pid })

