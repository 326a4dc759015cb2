/**
 * Baseline: a bare Node HTTP server that reads the request body and answers a fixed payload
 * (the same JSON reply, or an XML document of the same size). Whatever the daemon does beyond
 * this is the cost of the daemon itself.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { ready, serve, str } from './rpc.js'

const payload = Buffer.from(str('payload'), 'utf8')
const type = str('contentType')
const server = createServer((req, res) => {
  req.on('data', () => {})
  req.on('end', () => {
    res.writeHead(200, { 'content-type': type, 'content-length': payload.length })
    res.end(payload)
  })
})
server.keepAliveTimeout = 60_000
await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
serve({ cpu: () => process.cpuUsage() }, () => new Promise<void>((r) => {
  server.close(() => r())
  server.closeAllConnections()
}))
await ready({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })
