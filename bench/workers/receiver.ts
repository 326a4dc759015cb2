/** A callback receiver: reads each POST and answers 204; counts what it accepted. */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { ready, serve, wallMs } from './rpc.js'

let accepted = 0
let first = 0
let last = 0
const server = createServer((req, res) => {
  req.on('data', () => {})
  req.on('end', () => {
    res.writeHead(204).end()
    accepted++
    last = wallMs()
    if (first === 0) first = last
  })
})
server.keepAliveTimeout = 60_000
await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
serve(
  {
    stats: () => ({ accepted, first, last }),
    reset: () => {
      accepted = 0
      first = 0
      last = 0
    },
  },
  () => new Promise<void>((r) => {
    server.close(() => r())
    server.closeAllConnections()
  }),
)
await ready({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/result` })
