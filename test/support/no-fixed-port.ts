/**
 * Loaded into every test process (.taprc `node-arg`): a test must not listen on a fixed port.
 * Test files run side by side, and beside whatever else runs on the machine (a daemon on 8080, a
 * FreeSWITCH on 8021): a fixed port fails whenever someone else holds it. test/ui/page.test.ts
 * did so (the shipped xml_curl port 8081) until this guard was added.
 *
 * The rule, precise rather than a pattern in the sources: a listen on a port number other than 0
 * throws, unless the operating system handed that port to this process before (a listen on 0
 * whose port the test reads, then reuses: a restart on the same port, a "free port" bound then
 * released). It covers every net/http/ws server of the test process itself; child processes
 * (a spawned `cod start`) get the ports their configuration files say, which the tests write
 * as 0 or as ports obtained here.
 */
import net from 'node:net'

/** Ports the operating system gave this process (a listen on port 0). */
const handedOut = new Set<number>()

/** The port a `listen(...)` call asks for, when it asks for one by number. */
function requestedPort(args: unknown[]): number | undefined {
  const first = args[0]
  const raw = typeof first === 'object' && first !== null && !Array.isArray(first) ? (first as { port?: unknown }).port : first
  if (typeof raw === 'number') return raw
  if (typeof raw === 'string' && /^\d+$/.test(raw)) return Number(raw)
  return undefined
}

const listen = net.Server.prototype.listen
net.Server.prototype.listen = function guardedListen(this: net.Server, ...args: unknown[]): net.Server {
  const port = requestedPort(args)
  if (port !== undefined && port !== 0 && !handedOut.has(port)) {
    throw new Error(`a test listens on the fixed port ${port}: listen on 0 and read the port (test/support/no-fixed-port.ts)`)
  }
  this.once('listening', () => {
    const address = this.address()
    if (typeof address === 'object' && address !== null) handedOut.add(address.port)
  })
  return (listen as (...a: unknown[]) => net.Server).apply(this, args)
} as typeof net.Server.prototype.listen
