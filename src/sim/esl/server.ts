/**
 * The inbound event socket (mod_event_socket.c v1.10.12) over TCP: accepts connections, each
 * one an EslConnection, and drops or closes them all on request.
 */
import net from 'node:net'
import { EslConnection, type EslConnectionOptions } from './connection.js'

export type EslServerOptions = EslConnectionOptions

export class EslServer {
  private server?: net.Server
  private readonly conns = new Set<EslConnection>()

  constructor(private readonly opts: EslServerOptions) {}

  listen(port: number, host = '127.0.0.1'): Promise<number> {
    return new Promise((resolve, reject) => {
      const server = net.createServer((socket) => {
        const c = new EslConnection(socket, this.opts, () => this.conns.delete(c))
        this.conns.add(c)
      })
      server.once('error', reject)
      server.listen(port, host, () => {
        server.off('error', reject)
        this.server = server
        const addr = server.address()
        resolve(typeof addr === 'object' && addr !== null ? addr.port : port)
      })
    })
  }

  /** Destroys every ESL socket abruptly (no notice): the calls stay up. */
  dropConnections(): void {
    for (const c of [...this.conns]) c.destroy()
  }

  /** Every socket gets the shutdown notice and is closed (FIN), as a shutting-down FreeSWITCH does. */
  shutDownConnections(): void {
    for (const c of [...this.conns]) c.shutDown()
  }

  async close(): Promise<void> {
    this.dropConnections()
    const server = this.server
    this.server = undefined
    if (server !== undefined) await new Promise<void>((r) => server.close(() => r()))
  }
}
