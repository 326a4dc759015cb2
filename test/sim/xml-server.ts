/**
 * A stand-in for the daemon's xml_curl endpoint, for simulator tests that need a dialplan
 * (dialplan.test.ts, record-session.test.ts): it answers each request with what the test says and
 * keeps the requests with their decoded forms.
 */
import http from 'node:http'

export interface Req {
  readonly headers: http.IncomingHttpHeaders
  readonly rawHeaders: string[]
  readonly url: string
  readonly method: string
  readonly form: Array<[string, string]>
}

export const NOT_FOUND = '<document type="freeswitch/xml"><section name="result"><result status="not found"/></section></document>'

export const dialplan = (context: string, actions: string, expression = '^cod_route$'): string =>
  `<?xml version="1.0"?><document type="freeswitch/xml"><section name="dialplan"><context name="${context}">` +
  `<extension name="never"><condition field="destination_number" expression="^nomatch$"><action application="set" data="wrong=1"/></condition></extension>` +
  `<extension name="route"><condition field="destination_number" expression="${expression}">${actions}</condition></extension>` +
  `</context></section></document>`

export const act = (app: string, data = ''): string => `<action application="${app}" data="${data.replace(/&/g, '&amp;').replace(/"/g, '&quot;')}"/>`

/** A stand-in for the daemon's xml_curl endpoint. */
export async function xmlServer(t: { teardown: (fn: () => unknown) => void }, respond: (r: Req) => { status?: number; body: string }) {
  const requests: Req[] = []
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString()
      const form = body.split('&').map((kv) => {
        const i = kv.indexOf('=')
        return [decodeURIComponent(kv.slice(0, i)), decodeURIComponent(kv.slice(i + 1))] as [string, string]
      })
      const r: Req = { headers: req.headers, rawHeaders: req.rawHeaders, url: req.url ?? '', method: req.method ?? '', form }
      requests.push(r)
      const out = respond(r)
      res.writeHead(out.status ?? 200, { 'Content-Type': 'text/xml' })
      res.end(out.body)
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  const port = (server.address() as { port: number }).port
  t.teardown(() => new Promise<void>((r) => server.close(() => r())))
  return { requests, url: `http://127.0.0.1:${port}/freeswitch/xml_curl` }
}

export const field = (r: Req, name: string): string | undefined => r.form.find(([k]) => k === name)?.[1]
export const section = (r: Req): string | undefined => field(r, 'section')
