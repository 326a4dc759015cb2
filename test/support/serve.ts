/** Test servers on a free loopback port, closed (connections and all) when the test ends. */
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Test } from 'tap'

/** Serves a Koa app (or anything with its `listen`) until the test ends; resolves with its base URL. */
export async function serveUntilTeardown(test: Pick<Test, 'teardown'>, app: { listen(port: number, host: string): Server }): Promise<string> {
  const server = app.listen(0, '127.0.0.1')
  await new Promise<void>((r) => server.once('listening', r))
  test.teardown(
    () =>
      new Promise<void>((r) => {
        server.closeAllConnections()
        server.close(() => r())
      }),
  )
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}
