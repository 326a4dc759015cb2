/**
 * The guard every test process loads (test/support/no-fixed-port.ts, .taprc): a listen on a
 * fixed port throws before anything is bound; a port the system handed out before may be
 * listened on again (a restart on the same port).
 */
import { createServer, type AddressInfo, type Server } from 'node:net'
import t from 'tap'

const listening = (server: Server, port: number): Promise<number> =>
  new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, '127.0.0.1', () => resolve((server.address() as AddressInfo).port))
  })
const closed = (server: Server): Promise<void> => new Promise((resolve) => server.close(() => resolve()))

t.test('a fixed port is refused, in every form listen takes it', async (t) => {
  // 8081: the shipped xml_curl port that test/ui/page.test.ts once bound. Nothing is bound: the call throws first.
  t.throws(() => createServer().listen(8081, '127.0.0.1'), /a test listens on the fixed port 8081/)
  t.throws(() => createServer().listen({ port: 8081, host: '127.0.0.1' }), /fixed port 8081/)
  t.throws(() => createServer().listen('8081'), /fixed port 8081/)
})

t.test('port 0, and a port handed out before (a restart on the same port), are fine', async (t) => {
  const first = createServer()
  const port = await listening(first, 0)
  await closed(first)
  const again = createServer()
  t.equal(await listening(again, port), port)
  await closed(again)
})
