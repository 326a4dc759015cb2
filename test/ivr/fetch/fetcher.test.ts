import t from 'tap'
import http from 'node:http'
import https from 'node:https'
import type { AddressInfo } from 'node:net'
import type { LookupAddress } from 'node:dns'
import { readFileSync } from 'node:fs'
import { ok, err } from '../../../src/util/result.js'
import { silentLogger } from '../../../src/util/logger.js'
import { parseCidrList, type Cidr } from '../../../src/net/address-guard.js'
import { decodeBody } from '../../../src/ivr/fetch/decode.js'
import { createFetcher, type FetcherOptions } from '../../../src/ivr/fetch/fetcher.js'
import { pinnedLookup } from '../../../src/net/guarded-connect.js'
import { splitUrlList } from '../../../src/ivr/fetch/urls.js'

/** What the helpers below need of a (sub)test. */
interface Test {
  teardown(fn: () => unknown): void
  fail(message: string): unknown
}

interface Seen {
  readonly method: string
  readonly url: string
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
  readonly localAddress: string
  readonly servername?: string
}

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void

interface Served {
  readonly port: number
  readonly seen: Seen[]
  readonly url: (path: string, host?: string) => string
}

const cidrs = (...list: string[]): Cidr[] => {
  const r = parseCidrList(list)
  if (!r.ok) throw new Error(r.error)
  return r.value
}
const LOCAL = cidrs('127.0.0.1/32')

const attach = async (t: Test, server: http.Server | https.Server, handler: Handler, proto: string): Promise<Served> => {
  const seen: Seen[] = []
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      const sock = req.socket as typeof req.socket & { servername?: string | false }
      seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body,
        localAddress: req.socket.localAddress ?? '',
        ...(typeof sock.servername === 'string' ? { servername: sock.servername } : {}),
      })
      handler(req, res, body)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  )
  return { port, seen, url: (path, host = '127.0.0.1') => `${proto}://${host}:${port}${path}` }
}

const serve = (t: Test, handler: Handler): Promise<Served> => attach(t, http.createServer(), handler, 'http')

const text =
  (body: string, status = 200, type = 'application/xml'): Handler =>
  (_req, res) => {
    res.writeHead(status, { 'content-type': type })
    res.end(body)
  }

/** An injectable resolver: names map to fixed answers (or a function of the call count). */
const fakeDns = (answers: Record<string, string[] | ((n: number) => string[])>) => {
  const calls: string[] = []
  const lookup = (host: string): Promise<string[]> => {
    calls.push(host)
    const a = answers[host]
    if (a === undefined) return Promise.reject(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' }))
    return Promise.resolve(typeof a === 'function' ? a(calls.filter((h) => h === host).length) : a)
  }
  return { calls, lookup }
}

const noDns = (t: Test) => (host: string): Promise<string[]> => {
  t.fail(`DNS must not be asked for ${host}`)
  return Promise.resolve([])
}

const make = (o: Partial<FetcherOptions> = {}) => createFetcher({ allow: [], logger: silentLogger(), ...o })

const DOC = '<Response><Hangup/></Response>'
const PARAMS = { CallUUID: 'u-1', CallStatus: 'in-progress', CallerName: 'Ann & Bob', var_x: '{"a":1}' }

t.test('a loopback server is refused without the allow-list and reached with it', async (t) => {
  const s = await serve(t, text(DOC))
  const refused = await make({ lookup: noDns(t) }).fetchDocument([s.url('/ivr')], PARAMS)
  t.match(refused, { ok: false, error: { kind: 'blocked_address', message: /127\.0\.0\.1 is loopback/ } })
  t.equal(s.seen.length, 0, 'nothing was sent')
  const got = await make({ allow: LOCAL, lookup: noDns(t) }).fetchDocument([s.url('/ivr')], PARAMS)
  t.match(got, { ok: true, value: { body: DOC, contentType: 'application/xml', url: s.url('/ivr'), requestedUrl: s.url('/ivr') } })
  t.equal(s.seen.length, 1)
})

t.test('checkTarget (media URLs FreeSWITCH downloads): the same address rules, nothing fetched', async (t) => {
  t.match(await make({ lookup: noDns(t) }).checkTarget('http://127.0.0.1/a.wav'), { ok: false, error: { kind: 'blocked_address' } })
  t.match(await make({ allow: LOCAL, lookup: noDns(t) }).checkTarget('http://127.0.0.1/a.wav'), { ok: true })
  const privateName = make({ lookup: async () => ['93.184.216.34', '10.0.0.7'] })
  t.match(await privateName.checkTarget('https://media.example.test/a.wav'), { ok: false, error: { kind: 'blocked_address', message: /10\.0\.0\.7/ } })
  t.match(await make({ lookup: async () => ['93.184.216.34'] }).checkTarget('https://media.example.test/a.wav'), { ok: true })
  t.match(await make().checkTarget('file:///etc/passwd'), { ok: false, error: { kind: 'bad_url' } })
})

t.test('odd textual forms of 127.0.0.1 in URLs are normalised and then refused', async (t) => {
  const s = await serve(t, text(DOC))
  const forms = [
    `http://2130706433:${s.port}/`,
    `http://0177.0.0.1:${s.port}/`,
    `http://0x7f.1:${s.port}/`,
    `http://0x7f000001:${s.port}/`,
    `http://127.1:${s.port}/`,
    `http://127.0.0.1.:${s.port}/`,
    `http://[::ffff:127.0.0.1]:${s.port}/`,
    `http://[::ffff:7f00:1]:${s.port}/`,
    `http://[0:0:0:0:0:ffff:7f00:1]:${s.port}/`,
  ]
  for (const u of forms) {
    const r = await make({ lookup: noDns(t) }).fetchDocument([u], {})
    t.match(r, { ok: false, error: { kind: 'blocked_address', message: /loopback/ } }, u)
  }
  t.equal(s.seen.length, 0)
  // With 127.0.0.1 allowed, the same forms reach the server: proof they meant 127.0.0.1.
  for (const u of forms) {
    const r = await make({ allow: LOCAL, lookup: noDns(t) }).fetchDocument([u], {})
    t.match(r, { ok: true, value: { body: DOC } }, `${u} with allow-list`)
  }
  t.equal(s.seen.length, forms.length)
  // The deprecated IPv4-compatible form stays refused even then, and never connects.
  const compat = await make({ allow: LOCAL, lookup: noDns(t) }).fetchDocument([`http://[::127.0.0.1]:${s.port}/`], {})
  t.match(compat, { ok: false, error: { kind: 'blocked_address', message: /ipv4-compatible/ } })
  const other = await make({ allow: LOCAL, lookup: noDns(t) }).fetchDocument([`http://127.0.0.2:${s.port}/`], {})
  t.match(other, { ok: false, error: { kind: 'blocked_address' } }, '127.0.0.2 is outside 127.0.0.1/32')
})

t.test('a public name resolving to a private address is refused', async (t) => {
  const s = await serve(t, text(DOC))
  for (const addrs of [['127.0.0.1'], ['10.0.0.5'], ['169.254.169.254'], ['::1'], ['fd00::1'], ['93.184.216.34', '127.0.0.1']]) {
    const dns = fakeDns({ 'ivr.example.com': addrs })
    const r = await make({ lookup: dns.lookup }).fetchDocument([s.url('/', 'ivr.example.com')], {})
    t.match(r, { ok: false, error: { kind: 'blocked_address', message: /^ivr\.example\.com resolves to / } }, addrs.join(','))
  }
  t.equal(s.seen.length, 0)
  const dns = fakeDns({})
  const unknown = await make({ lookup: dns.lookup }).fetchDocument(['http://nowhere.example.com/'], {})
  t.match(unknown, { ok: false, error: { kind: 'network', message: /cannot resolve nowhere\.example\.com: ENOTFOUND/ } })
  const empty = await make({ lookup: fakeDns({ 'e.example.com': [] }).lookup }).fetchDocument(['http://e.example.com/'], {})
  t.match(empty, { ok: false, error: { kind: 'network', message: /no address/ } })
  const junk = await make({ lookup: fakeDns({ 'j.example.com': ['not-an-ip'] }).lookup }).fetchDocument(['http://j.example.com/'], {})
  t.match(junk, { ok: false, error: { kind: 'blocked_address' } })
})

t.test('DNS rebinding: the connection goes to the address that was checked', async (t) => {
  const s = await serve(t, text(DOC))
  // First answer: an allowed address; every later answer: a refused one. The system resolver
  // cannot resolve this name at all, so success means the request never asked it either.
  const dns = fakeDns({ 'rebind.example.com': (n) => (n === 1 ? ['127.0.0.1'] : ['10.0.0.1']) })
  const r = await make({ allow: LOCAL, lookup: dns.lookup }).fetchDocument([s.url('/doc', 'rebind.example.com')], { A: '1' })
  t.match(r, { ok: true, value: { body: DOC } })
  t.same(dns.calls, ['rebind.example.com'], 'resolved exactly once')
  t.equal(s.seen[0]?.localAddress, '127.0.0.1', 'connected to the checked address')
  t.equal(s.seen[0]?.headers.host, `rebind.example.com:${s.port}`, 'Host header keeps the name')
})

t.test('DNS rebinding across a redirect: each hop is resolved and checked again', async (t) => {
  const s = await serve(t, (req, res) => {
    if (req.url === '/first') {
      res.writeHead(302, { location: '/second' })
      res.end()
    } else text(DOC)(req, res, '')
  })
  const dns = fakeDns({ 'rebind.example.com': (n) => (n === 1 ? ['127.0.0.1'] : ['192.168.0.10']) })
  const r = await make({ allow: LOCAL, lookup: dns.lookup }).fetchDocument([s.url('/first', 'rebind.example.com')], {})
  t.match(r, { ok: false, error: { kind: 'blocked_address', message: /192\.168\.0\.10 is private/ } })
  t.equal(s.seen.length, 1, 'the second hop never connected')
})

t.test('pinnedLookup answers only with the checked addresses, in both call forms', async (t) => {
  const look = pinnedLookup([
    { address: '127.0.0.1', family: 4 },
    { address: '::1', family: 6 },
  ])
  const call = (options: { all?: boolean; family?: number }) =>
    new Promise<{ e: NodeJS.ErrnoException | null; a: string | LookupAddress[]; f?: number }>((resolve) =>
      look('evil.example.com', options, (e, a, f) => resolve({ e, a, f })),
    )
  t.same(await call({}), { e: null, a: '127.0.0.1', f: 4 })
  t.same(await call({ all: true }), {
    e: null,
    a: [
      { address: '127.0.0.1', family: 4 },
      { address: '::1', family: 6 },
    ],
    f: undefined,
  })
  t.same(await call({ family: 6 }), { e: null, a: '::1', f: 6 })
  t.same(await call({ all: true, family: 4 }), { e: null, a: [{ address: '127.0.0.1', family: 4 }], f: undefined })
  const none = pinnedLookup([{ address: '127.0.0.1', family: 4 }])
  const r = await new Promise<NodeJS.ErrnoException | null>((resolve) => none('x', { family: 6 }, (e) => resolve(e)))
  t.equal(r?.code, 'ENOTFOUND')
})

t.test('POST sends the parameters form-encoded; GET puts them in the query string', async (t) => {
  const s = await serve(t, text(DOC))
  const f = make({ allow: LOCAL })
  t.ok((await f.fetchDocument([s.url('/post')], PARAMS)).ok)
  const post = s.seen[0]
  t.equal(post?.method, 'POST')
  t.equal(post?.headers['content-type'], 'application/x-www-form-urlencoded')
  t.same(Object.fromEntries(new URLSearchParams(post?.body)), PARAMS)
  t.equal(post?.body, 'CallUUID=u-1&CallStatus=in-progress&CallerName=Ann+%26+Bob&var_x=%7B%22a%22%3A1%7D')
  t.equal(post?.url, '/post')

  const got = await f.fetchDocument([s.url('/get?menu=1')], PARAMS, 'GET')
  t.match(got, { ok: true, value: { url: s.url('/get?menu=1') } }, 'the document URL does not carry the call parameters')
  const get = s.seen[1]
  t.equal(get?.method, 'GET')
  t.equal(get?.body, '')
  t.equal(get?.headers['content-type'], undefined)
  const failed = await make({ lookup: noDns(t) }).fetchDocument([s.url('/get?menu=1')], PARAMS, 'GET')
  t.match(failed, { ok: false, error: { kind: 'blocked_address', url: s.url('/get?menu=1') } }, 'errors name the URL as given')
  const q = new URL(`http://x${get?.url ?? ''}`)
  t.equal(q.pathname, '/get')
  t.same(Object.fromEntries(q.searchParams), { menu: '1', ...PARAMS }, 'own query kept, parameters appended')
})

t.test('user info in the URL becomes Basic auth and never appears in errors', async (t) => {
  const s = await serve(t, (req, res) => {
    res.writeHead(req.headers.authorization === `Basic ${Buffer.from('app:s3cr et').toString('base64')}` ? 200 : 401)
    res.end(DOC)
  })
  const f = make({ allow: LOCAL })
  const good = await f.fetchDocument([`http://app:s3cr%20et@127.0.0.1:${s.port}/`], {})
  t.match(good, { ok: true, value: { body: DOC } })
  const bad = await f.fetchDocument([`http://app:wrong@127.0.0.1:${s.port}/`], {})
  t.match(bad, { ok: false, error: { kind: 'http_status', status: 401, url: s.url('/') } })
  t.notMatch(JSON.stringify(bad), /wrong/)
})

t.test('redirects: three are followed, the fourth is refused', async (t) => {
  const s = await serve(t, (req, res) => {
    const n = Number(/^\/r\/(\d+)$/.exec(req.url ?? '')?.[1] ?? 0)
    if (n > 0) {
      // Relative Location, resolved against the hop's URL.
      res.writeHead(n % 2 === 0 ? 302 : 307, { location: `/r/${n - 1}` })
      res.end()
    } else text(DOC)(req, res, '')
  })
  const f = make({ allow: LOCAL })
  const three = await f.fetchDocument([s.url('/r/3')], { A: '1' })
  t.match(three, { ok: true, value: { body: DOC, url: s.url('/r/0'), requestedUrl: s.url('/r/3') } })
  t.same(
    s.seen.map((x) => x.url),
    ['/r/3', '/r/2', '/r/1', '/r/0'],
  )
  s.seen.length = 0
  const four = await f.fetchDocument([s.url('/r/4')], {})
  t.match(four, { ok: false, error: { kind: 'too_many_redirects', message: /more than 3 redirects/ } })
  t.equal(s.seen.length, 4, 'the fourth Location was not requested')
  const limited = await make({ allow: LOCAL, maxRedirects: 0 }).fetchDocument([s.url('/r/1')], {})
  t.match(limited, { ok: false, error: { kind: 'too_many_redirects' } })
})

t.test('redirect methods: 303 and 301/302 after POST become GET without body; 307/308 repeat the POST', async (t) => {
  const s = await serve(t, (req, res) => {
    const m = /^\/(\d{3})$/.exec(req.url ?? '')
    if (m?.[1] !== undefined) {
      res.writeHead(Number(m[1]), { location: '/end' })
      res.end()
    } else text(DOC)(req, res, '')
  })
  const f = make({ allow: LOCAL })
  for (const [code, method, body] of [
    ['303', 'GET', ''],
    ['301', 'GET', ''],
    ['302', 'GET', ''],
    ['307', 'POST', 'A=1'],
    ['308', 'POST', 'A=1'],
  ] as const) {
    s.seen.length = 0
    t.ok((await f.fetchDocument([s.url(`/${code}`)], { A: '1' })).ok, code)
    t.match(s.seen[1], { method, body, url: '/end' }, `after ${code}`)
  }
})

t.test('redirects to refused addresses or schemes are not followed', async (t) => {
  const targets: Record<string, string> = {
    '/to-private': 'http://10.0.0.1/ivr',
    '/to-metadata': 'http://169.254.169.254/latest/meta-data/',
    '/to-name': 'http://internal.example.com/ivr',
    '/to-file': 'file:///etc/passwd',
    '/to-ftp': 'ftp://ftp.example.com/x.xml',
    '/to-junk': 'http://[bad',
    '/to-loopback-v6': 'http://[::1]/',
  }
  const s = await serve(t, (req, res) => {
    res.writeHead(302, { location: targets[req.url ?? ''] ?? '/' })
    res.end()
  })
  const dns = fakeDns({ 'internal.example.com': ['192.168.1.20'] })
  const f = make({ allow: LOCAL, lookup: dns.lookup })
  const expect: Record<string, [string, RegExp]> = {
    '/to-private': ['blocked_address', /10\.0\.0\.1 is private/],
    '/to-metadata': ['blocked_address', /metadata/],
    '/to-name': ['blocked_address', /internal\.example\.com resolves to 192\.168\.1\.20/],
    '/to-file': ['bad_url', /redirect \(HTTP 302\) from .*: scheme file: is not allowed/],
    '/to-ftp': ['bad_url', /scheme ftp: is not allowed/],
    '/to-junk': ['bad_url', /not a valid URL/],
    '/to-loopback-v6': ['blocked_address', /::1 is loopback/],
  }
  for (const [path, [kind, message]] of Object.entries(expect)) {
    const r = await f.fetchDocument([s.url(path)], {})
    t.match(r, { ok: false, error: { kind, message } }, path)
  }
  t.equal(s.seen.length, Object.keys(expect).length, 'only the first hops reached a server')
})

t.test('only http and https URLs are fetched', async (t) => {
  const f = make({ allow: cidrs('0.0.0.0/0', '::/0'), lookup: noDns(t) })
  for (const u of ['file:///etc/passwd', 'ftp://example.com/a.xml', 'gopher://127.0.0.1:70/', 'data:text/xml,<Response/>', 'javascript:alert(1)']) {
    t.match(await f.fetchDocument([u], {}), { ok: false, error: { kind: 'bad_url', message: /is not allowed \(http and https only\)/ } }, u)
  }
  for (const u of ['', 'not a url', '/relative/path', 'http://', 'inline_xml://PFJlc3BvbnNlLz4=']) {
    t.match(await f.fetchDocument([u], {}), { ok: false, error: { kind: 'bad_url' } }, JSON.stringify(u))
  }
  t.match(await f.fetchDocument([], {}), { ok: false, error: { kind: 'bad_url', message: 'no URL to fetch' } })
})

t.test('a server that does not answer in time gives a timeout', async (t) => {
  const s = await serve(t, (req, res) => {
    if (req.url === '/half') {
      res.writeHead(200, { 'content-type': 'application/xml' })
      res.write('<Response>')
    }
    // otherwise: never answer
  })
  const f = make({ allow: LOCAL, timeoutMs: 150 })
  t.match(await f.fetchDocument([s.url('/hang')], {}), { ok: false, error: { kind: 'timeout', message: /within 150 ms/ } })
  t.match(await f.fetchDocument([s.url('/half')], {}), { ok: false, error: { kind: 'timeout' } }, 'body never ends')
  const slowDns = make({ allow: LOCAL, timeoutMs: 100, lookup: () => new Promise<string[]>(() => undefined) })
  t.match(await slowDns.fetchDocument(['http://slow.example.com/'], {}), { ok: false, error: { kind: 'timeout', message: /resolving slow\.example\.com/ } })
})

t.test('bodies over the size limit are refused', async (t) => {
  const KIB = 1024
  const s = await serve(t, (req, res) => {
    if (req.url === '/stream') {
      // 300 KiB in chunks, no Content-Length: the cap must cut the stream.
      res.writeHead(200, { 'content-type': 'application/xml' })
      const chunk = Buffer.alloc(16 * KIB, 0x20)
      let sent = 0
      const push = (): void => {
        while (sent < 300 * KIB) {
          sent += chunk.length
          if (!res.write(chunk)) {
            res.once('drain', push)
            return
          }
        }
        res.end()
      }
      res.on('error', () => undefined)
      push()
    } else if (req.url === '/declared') {
      res.writeHead(200, { 'content-length': String(300 * KIB) })
      res.end(Buffer.alloc(300 * KIB, 0x20))
    } else {
      const body = Buffer.alloc(256 * KIB, 0x20)
      body.write(DOC)
      res.writeHead(200, { 'content-type': 'application/xml' })
      res.end(body)
    }
  })
  const f = make({ allow: LOCAL })
  t.match(await f.fetchDocument([s.url('/stream')], {}), { ok: false, error: { kind: 'too_large', message: /larger than 262144 bytes/ } })
  t.match(await f.fetchDocument([s.url('/declared')], {}), { ok: false, error: { kind: 'too_large', message: /307200 bytes/ } })
  const exact = await f.fetchDocument([s.url('/exact')], {})
  t.match(exact, { ok: true }, 'exactly 256 KiB is allowed')
  if (exact.ok) t.equal(exact.value.body.length, 256 * KIB)
})

t.test('fallbacks: the next URL is tried after a failure or an invalid body', async (t) => {
  const s = await serve(t, (req, res) => {
    if (req.url === '/500') text('oops', 500)(req, res, '')
    else if (req.url === '/invalid') text('<html>not ivr</html>')(req, res, '')
    else if (req.url === '/throws') text('<Throw/>')(req, res, '')
    else text(DOC)(req, res, '')
  })
  const accept = (body: string) => {
    if (body === '<Throw/>') throw new Error('validator crashed')
    return body.startsWith('<Response>') ? ok(true) : err('root element must be <IVR> or <Response>')
  }
  const f = make({ allow: LOCAL, accept })
  const second = await f.fetchDocument([s.url('/500'), s.url('/good')], PARAMS)
  t.match(second, { ok: true, value: { url: s.url('/good'), requestedUrl: s.url('/good'), body: DOC } })
  t.same(
    s.seen.map((x) => x.url),
    ['/500', '/good'],
  )
  t.same(Object.fromEntries(new URLSearchParams(s.seen[1]?.body)), PARAMS, 'the fallback gets the same parameters')

  const afterInvalid = await f.fetchDocument([s.url('/invalid'), s.url('/throws'), s.url('/good')], {})
  t.match(afterInvalid, { ok: true, value: { url: s.url('/good') } })

  const blockedFirst = await f.fetchDocument(['ftp://x/', 'http://10.0.0.1/', s.url('/good')], {})
  t.match(blockedFirst, { ok: true, value: { url: s.url('/good') } })

  const allBad = await f.fetchDocument([s.url('/500'), s.url('/invalid'), s.url('/throws')], {})
  t.match(allBad, {
    ok: false,
    error: {
      kind: 'invalid_body',
      url: s.url('/throws'),
      message: /\/500: HTTP 500 .*; .*\/invalid: invalid document: root element must be .*; .*\/throws: invalid document: validator crashed$/,
      attempts: [{ kind: 'http_status', status: 500 }, { kind: 'invalid_body' }, { kind: 'invalid_body' }],
    },
  })
  const single = await f.fetchDocument([s.url('/500')], {})
  t.match(single, { ok: false, error: { kind: 'http_status', status: 500, message: 'HTTP 500 Internal Server Error' } })
  t.notOk(!single.ok && single.error.attempts !== undefined, 'a single URL has no attempts list')
})

t.test('non-2xx answers fail, and a closed port is a network error', async (t) => {
  const s = await serve(t, (req, res) => {
    const code = Number(req.url?.slice(1))
    res.writeHead(code, code === 300 ? { location: '/x' } : {})
    res.end()
  })
  const f = make({ allow: LOCAL })
  for (const code of [204, 404, 500, 503, 300, 304]) {
    const r = await f.fetchDocument([s.url(`/${code}`)], {})
    if (code === 204) t.match(r, { ok: true, value: { body: '' } }, '204 is a 2xx (its empty body is for accept to judge)')
    else t.match(r, { ok: false, error: { kind: 'http_status', status: code } }, String(code))
  }
  const r302 = await f.fetchDocument([s.url('/302')], {})
  t.match(r302, { ok: false, error: { kind: 'http_status', status: 302 } }, 'a redirect without Location')

  const closed = http.createServer()
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
  const port = (closed.address() as AddressInfo).port
  await new Promise<void>((resolve) => closed.close(() => resolve()))
  t.match(await f.fetchDocument([`http://127.0.0.1:${port}/`], {}), { ok: false, error: { kind: 'network', message: /ECONNREFUSED/ } })

  const cut = await serve(t, (req) => req.socket.destroy())
  t.match(await f.fetchDocument([cut.url('/')], {}), { ok: false, error: { kind: 'network' } }, 'connection reset')
  const mid = await serve(t, (_req, res) => {
    res.writeHead(200, { 'content-length': '100' })
    res.write('<Response>')
    setImmediate(() => res.socket?.destroy())
  })
  t.match(await f.fetchDocument([mid.url('/')], {}), { ok: false, error: { kind: 'network' } }, 'body cut short')
})

t.test('compressed answers are refused (the size cap counts what is parsed)', async (t) => {
  const s = await serve(t, (_req, res) => {
    res.writeHead(200, { 'content-encoding': 'gzip' })
    res.end(Buffer.from([0x1f, 0x8b]))
  })
  const r = await make({ allow: LOCAL }).fetchDocument([s.url('/')], {})
  t.match(r, { ok: false, error: { kind: 'invalid_body', message: /Content-Encoding "gzip"/ } })
  t.equal(s.seen[0]?.headers['accept-encoding'], 'identity')
})

t.test('character sets: charset header, XML declaration, BOM, malformed bytes', async (t) => {
  // "はい" in Shift_JIS.
  const sjis = Buffer.concat([Buffer.from('<?xml version="1.0" encoding="Shift_JIS"?><Response><Speak>'), Buffer.from([0x82, 0xcd, 0x82, 0xa2]), Buffer.from('</Speak></Response>')])
  t.match(decodeBody(sjis, 'application/xml', true), { ok: true, value: /<Speak>はい<\/Speak>/ })
  t.match(decodeBody(sjis, 'application/xml; charset="shift_jis"', false), { ok: true, value: /はい/ })
  t.match(decodeBody(sjis, 'application/xml', false), { ok: false, error: /not valid utf-8/ }, 'no sniffing for JSON')
  t.match(decodeBody(Buffer.from('\ufeff{"a":1}'), 'application/json; charset=iso-8859-1', false), { ok: true, value: '{"a":1}' }, 'BOM wins')
  t.match(decodeBody(Buffer.from([0xff, 0xfe, 0x41, 0x00]), '', false), { ok: true, value: 'A' })
  t.match(decodeBody(Buffer.from('x'), 'text/xml; charset=x-klingon', true), { ok: false, error: /unsupported charset "x-klingon"/ })
  t.match(decodeBody(Buffer.from([0x3c, 0xc3, 0x28]), 'text/xml', true), { ok: false, error: /not valid utf-8/ })

  const s = await serve(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/xml' })
    res.end(Buffer.from([0x3c, 0xc3, 0x28]))
  })
  t.match(await make({ allow: LOCAL }).fetchDocument([s.url('/')], {}), { ok: false, error: { kind: 'invalid_body', message: /not valid utf-8/ } })
})

t.test('fetchJson parses JSON and refuses anything else', async (t) => {
  const s = await serve(t, (req, res) => {
    if (req.url?.startsWith('/json')) text(JSON.stringify({ balance: 12.5, method: req.method, query: req.url }), 200, 'application/json')(req, res, '')
    else if (req.url === '/404') text('{}', 404)(req, res, '')
    else text('<not-json/>')(req, res, '')
  })
  const f = make({ allow: LOCAL })
  t.same(await f.fetchJson(s.url('/json'), { A: '1' }), ok({ balance: 12.5, method: 'POST', query: '/json' }))
  t.equal(s.seen[0]?.body, 'A=1')
  t.equal(s.seen[0]?.headers.accept, 'application/json')
  t.same(await f.fetchJson(s.url('/json'), { A: '1' }, 'GET'), ok({ balance: 12.5, method: 'GET', query: '/json?A=1' }))
  t.match(await f.fetchJson(s.url('/xml'), {}), { ok: false, error: { kind: 'invalid_body', message: /^not JSON: / } })
  t.match(await f.fetchJson(s.url('/404'), {}), { ok: false, error: { kind: 'http_status', status: 404 } })
  t.match(await make({ lookup: noDns(t) }).fetchJson(s.url('/json'), {}), { ok: false, error: { kind: 'blocked_address' } })
  t.match(await f.fetchJson('file:///etc/passwd', {}), { ok: false, error: { kind: 'bad_url' } })
})

t.test('reportError posts CallStatus=error and Error, and never throws', async (t) => {
  const s = await serve(t, text('thanks', 200, 'text/plain'))
  const f = make({ allow: LOCAL })
  await f.reportError(s.url('/ivr'), { CallUUID: 'u-1', CallStatus: 'in-progress', DomainName: 'example.test' }, 'invalid document: unknown element <Foo>')
  t.equal(s.seen.length, 1)
  t.equal(s.seen[0]?.method, 'POST')
  t.equal(s.seen[0]?.headers['content-type'], 'application/x-www-form-urlencoded')
  t.same(Object.fromEntries(new URLSearchParams(s.seen[0]?.body)), {
    CallUUID: 'u-1',
    CallStatus: 'error',
    DomainName: 'example.test',
    Error: 'invalid document: unknown element <Foo>',
  })
  await f.reportError(s.url('/ivr'), { CallUUID: 'u-2', Error: 'kept' })
  t.same(Object.fromEntries(new URLSearchParams(s.seen[1]?.body)), { CallUUID: 'u-2', Error: 'kept', CallStatus: 'error' })

  // Failures of every kind resolve quietly, and the guard still applies.
  const quiet = make({ lookup: noDns(t), timeoutMs: 100 })
  await t.resolves(quiet.reportError(s.url('/ivr'), {}, 'x'))
  await t.resolves(quiet.reportError('file:///etc/passwd', {}, 'x'))
  await t.resolves(quiet.reportError('::::', {}, 'x'))
  const broken = createFetcher({
    allow: [],
    logger: silentLogger(),
    lookup: () => {
      throw new Error('resolver exploded')
    },
  })
  await t.resolves(broken.reportError('http://x.example.com/', {}, 'x'))
  t.equal(s.seen.length, 2, 'the refused report never reached the loopback server')
})

t.test('https: the connection is pinned while SNI, Host and the certificate use the name', async (t) => {
  const fixtures = new URL('./fixtures/', import.meta.url)
  const cert = readFileSync(new URL('ivr.example.test.crt', fixtures))
  const key = readFileSync(new URL('ivr.example.test.key', fixtures))
  const s = await attach(t, https.createServer({ cert, key }), text(DOC), 'https')
  const dns = fakeDns({ 'ivr.example.test': ['127.0.0.1'], 'other.example.test': ['127.0.0.1'] })
  const f = make({ allow: LOCAL, lookup: dns.lookup, ca: cert })
  const r = await f.fetchDocument([s.url('/tls', 'ivr.example.test')], {})
  t.match(r, { ok: true, value: { body: DOC } })
  t.equal(s.seen[0]?.servername, 'ivr.example.test')
  t.equal(s.seen[0]?.headers.host, `ivr.example.test:${s.port}`)
  // The same server under another name fails the certificate check: the name is verified.
  const wrong = await f.fetchDocument([s.url('/tls', 'other.example.test')], {})
  t.match(wrong, { ok: false, error: { kind: 'network', message: /ERR_TLS_CERT_ALTNAME_INVALID/ } })
  // Without the test CA the self-signed certificate is refused.
  const untrusted = await make({ allow: LOCAL, lookup: dns.lookup }).fetchDocument([s.url('/tls', 'ivr.example.test')], {})
  t.match(untrusted, { ok: false, error: { kind: 'network' } })
})

t.test('splitUrlList splits comma lists of fallbacks', async (t) => {
  t.same(splitUrlList('https://a.example.com/x, https://b.example.com/y ,,'), ['https://a.example.com/x', 'https://b.example.com/y'])
  t.same(splitUrlList(''), [])
  t.same(splitUrlList('http://one/'), ['http://one/'])
})
