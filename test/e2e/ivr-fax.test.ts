/**
 * Issue 30 items 3-5 through the whole daemon on the simulator: `<SendFax>` sends a TIFF of the
 * domain's fax folder and `<ReceiveFax>` writes one under `received_faxes/`, the simulated far
 * end being a fax machine (`fax_pages`) or not (it times out as FreeSWITCH does,
 * test/fixtures/freeswitch/esl/47); when the call ends, the document's URL gets
 * `CallStatus=completed` with the call's duration and the fax's results.
 */
import t from 'tap'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdtemp, readFile, writeFile, mkdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { blankFaxTiff, countTiffPages } from '../../src/sim/apps/tiff.js'
import { startHarness, type Harness } from './harness.js'

/** Documents of the application server by path; every request it got. */
const docs = new Map<string, string>()
const hits: { path: string; form: URLSearchParams }[] = []
const app = createServer((req, res) => {
  let body = ''
  req.on('data', (c: Buffer) => (body += c.toString()))
  req.on('end', () => {
    const path = (req.url ?? '').split('?')[0] ?? ''
    hits.push({ path, form: new URLSearchParams(body) })
    res.writeHead(200, { 'content-type': 'text/xml' }).end(docs.get(path) ?? '<Response><Hangup/></Response>')
  })
})

let h: Harness
let base: string
let dir: string
const domainFaxes = (): string => join(dir, 'faxes', 'example.test')

t.before(async () => {
  await new Promise<void>((r) => app.listen(0, '127.0.0.1', r))
  base = `http://127.0.0.1:${(app.address() as AddressInfo).port}`
  dir = await mkdtemp(join(tmpdir(), 'cod-ivr-fax-'))
  await mkdir(join(dir, 'domains'))
  const daemon = (await readFile('conf/daemon.yaml', 'utf8')).replace('ivr: { fetch_allow: [] }', `ivr: { fetch_allow: ["127.0.0.1/32"], fax_dir: faxes }`)
  await writeFile(join(dir, 'daemon.yaml'), daemon)
  const domain = (await readFile('conf/domains/example.test.yaml', 'utf8')).replace(
    '    default: { answer_after: 1 }\n',
    '    default: { answer_after: 1 }\n' +
      '    "0355554444": { answer_after: 1, fax_pages: 2 }\n' +
      '    "0355553333": { answer_after: 1 }\n',
  )
  await writeFile(join(dir, 'domains', 'example.test.yaml'), domain)
  await mkdir(join(domainFaxes(), 'invoices'), { recursive: true })
  await writeFile(join(domainFaxes(), 'invoices', 'three.tif'), blankFaxTiff(3))
  h = await startHarness({ configFile: join(dir, 'daemon.yaml') })
})
t.teardown(async () => {
  await h.close()
  app.close()
  await rm(dir, { recursive: true, force: true })
})

/** Calls `target` with the document at `path`; resolves with the form of its `completed` notice. */
async function run(target: string, path: string, xml: string): Promise<URLSearchParams> {
  docs.set(path, xml)
  const reply = await h.post('call_external', { target, destination: `xml_url:${base}${path}` })
  if (reply.status !== 200) throw new Error(JSON.stringify(reply.body))
  const done = await h.waitFor(`CallStatus=completed at ${path}`, () => hits.find((x) => x.path === path && x.form.get('CallStatus') === 'completed'), 15_000)
  return done.form
}

t.test('SendFax to a fax machine: 3 pages sent, the results and the duration posted at the end', async (t) => {
  const form = await run('0355554444', '/send', '<Response><SendFax header="ACME 03-1234">invoices/three.tif</SendFax></Response>')
  t.equal(form.get('FaxOperation'), 'transmission')
  t.equal(form.get('FaxFilePath'), 'invoices/three.tif')
  t.equal(form.get('FaxResultCode'), '0')
  t.equal(form.get('FaxResultText'), 'OK')
  t.equal(form.get('FaxPages'), '3')
  t.match(form.get('CallDuration'), /^\d+$/)
  t.equal(hits.filter((x) => x.path === '/send').length, 2, 'the document, then its completed notice')
})

t.test('ReceiveFax from a fax machine: a 2-page TIFF under received_faxes/, its folders made', async (t) => {
  const form = await run('0355554444', '/receive', '<Response><ReceiveFax>orders/in.tif</ReceiveFax></Response>')
  t.equal(form.get('FaxOperation'), 'reception')
  t.equal(form.get('FaxFilePath'), 'received_faxes/orders/in.tif')
  t.equal(form.get('FaxResultCode'), '0')
  t.equal(form.get('FaxPages'), '2')
  t.equal(countTiffPages(await readFile(join(domainFaxes(), 'received_faxes', 'orders', 'in.tif'))), 2)
})

t.test('SendFax to a far end that is no fax machine: code 2, no pages, as FreeSWITCH says (esl/47)', async (t) => {
  const form = await run('0355553333', '/nofax', '<Response><SendFax>invoices/three.tif</SendFax></Response>')
  t.equal(form.get('FaxResultCode'), '2')
  t.equal(form.get('FaxResultText'), 'Timed out waiting for initial communication')
  t.equal(form.get('FaxPages'), '0')
})

t.test('SendFax of a missing file: the call ends with an Error naming it, then completed', async (t) => {
  const form = await run('0355554444', '/missing', '<Response><SendFax>invoices/nope.tif</SendFax></Response>')
  const error = hits.find((x) => x.path === '/missing' && x.form.get('CallStatus') === 'error')
  t.match(error?.form.get('Error'), /SendFax: the file "invoices\/nope\.tif" is missing from the domain's fax folder/)
  t.equal(form.get('FaxOperation'), null, 'no fax ran')
})
