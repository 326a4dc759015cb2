/**
 * Issue 30 items 3-5 on the real switch: a fax sent by one leg with `<SendFax>` is received by
 * the other with `<ReceiveFax>`, both run by the daemon's IVR, mod_spandsp doing the T.30 work
 * (loaded by freeswitch/autoload_configs/modules.conf.xml). The lane's SIP phones carry no audio,
 * so the call is a loopback call (as test/fixtures/freeswitch/esl/45 was captured):
 * `originate loopback/3002/example.test 3002 XML example.test` makes both legs dial the domain's
 * extension 3002 (the application server's `/ext`), whose document sends the inbound leg
 * (loopback-b) to `/fax-rx` and the outbound one (loopback-a) to `/fax-tx`.
 *
 * The TIFF is made here: three 1728-pixel G4 pages, 204x196 dpi (Debian's libtiff-tools:
 * ppm2tiff, tiffset, tiffcp; .ci/run installs them). Both documents' URLs get
 * `CallStatus=completed` with FaxResultCode=0 and FaxPages=3, and the received file has the
 * same three pages. lane.realfs.ts calls realFax with its real world and application server;
 * the simulator's side is test/e2e/ivr-fax.test.ts.
 */
import { execFile } from 'node:child_process'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
import type { Test } from 'tap'
import { countTiffPages } from '../../src/sim/apps/tiff.js'
import { waitUntil, type AppServer, type RealWorld } from './world.js'

const run = promisify(execFile)
const PAGES = 3

/** A 1-bit PBM page of 1728 x 400 with a checkerboard that differs per page (real data to code). */
function pbmPage(page: number): Buffer {
  const width = 1728
  const height = 400
  const row = width / 8
  const data = Buffer.alloc(row * height)
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      if ((Math.floor(x / (16 * page)) + Math.floor(y / 24)) % 2 === 0 && y % 50 > 10) data[y * row + (x >> 3)]! |= 0x80 >> (x & 7)
    }
  }
  return Buffer.concat([Buffer.from(`P4\n${width} ${height}\n`), data])
}

/** A multi-page G4 fax TIFF at `target`, made with libtiff's tools. */
async function makeFax(target: string): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), 'cod-fax-pages-'))
  try {
    const pages: string[] = []
    for (let p = 1; p <= PAGES; p++) {
      const pbm = join(work, `p${p}.pbm`)
      const tif = join(work, `p${p}.tif`)
      await writeFile(pbm, pbmPage(p))
      // Fine resolution (204 x 196 dpi), as a fax machine scans: spandsp sends it as it is.
      await run('ppm2tiff', ['-c', 'g4', '-R', '204', pbm, tif])
      await run('tiffset', ['-s', '283', '196', tif])
      pages.push(tif)
    }
    await mkdir(dirname(target), { recursive: true })
    await run('tiffcp', ['-c', 'g4', ...pages, target])
  } finally {
    await rm(work, { recursive: true, force: true })
  }
}

export async function realFax(t: Test, real: RealWorld, app: AppServer): Promise<void> {
  const loaded = await real.tap.api('load mod_loopback')
  t.match(loaded, /\+OK|already loaded/, 'mod_loopback loaded')
  t.match(await real.tap.api('module_exists mod_spandsp'), /true/, 'mod_spandsp loaded by the shipped modules.conf.xml')

  // The daemon's fax folder: ivr.fax_dir's default, `faxes` beside the lane's daemon.yaml.
  const domainFaxes = join(dirname(real.state), 'faxes', 'example.test')
  await makeFax(join(domainFaxes, 'lane', 'out.tif'))
  t.equal(countTiffPages(await readFile(join(domainFaxes, 'lane', 'out.tif'))), PAGES, `a ${PAGES}-page TIFF to send`)

  app.documents['/ext'] =
    `<Response><If expr="Direction == 'inbound'"><Then><Redirect>${app.base}/fax-rx</Redirect></Then>` +
    `<Else><Redirect>${app.base}/fax-tx</Redirect></Else></If></Response>`
  // The receiver stays on the line a moment after its fax: hanging up at once could cut the
  // sender's last exchange (45: rxfax completes about 1 s before txfax).
  app.documents['/fax-rx'] = '<Response><ReceiveFax>lane/in.tif</ReceiveFax><Wait length="3"/></Response>'
  app.documents['/fax-tx'] = '<Response><SendFax header="cod realfs lane">lane/out.tif</SendFax></Response>'

  const from = app.hits.length
  const a = crypto.randomUUID()
  const completed = (path: string) => app.hits.slice(from).find((h) => h.path === path && h.form.get('CallStatus') === 'completed')
  try {
    const job = await real.tap.api(`bgapi originate {origination_uuid=${a},loopback_bowout=false}loopback/3002/example.test 3002 XML example.test`)
    t.match(job, /^\+OK/, 'the loopback call is placed')
    const tx = await waitUntil('the sender\'s completed notice', () => completed('/fax-tx'), 90_000)
    const rx = await waitUntil('the receiver\'s completed notice', () => completed('/fax-rx'), 15_000)
    t.match(Object.fromEntries(tx.form), { FaxOperation: 'transmission', FaxFilePath: 'lane/out.tif', FaxResultCode: '0', FaxResultText: 'OK', FaxPages: String(PAGES) }, 'sent')
    t.match(Object.fromEntries(rx.form), { FaxOperation: 'reception', FaxFilePath: 'received_faxes/lane/in.tif', FaxResultCode: '0', FaxResultText: 'OK', FaxPages: String(PAGES) }, 'received')
    t.match(tx.form.get('CallDuration'), /^\d+$/)
    t.ok(Number(rx.form.get('CallDuration')) >= 5, `the receiver's call lasted the fax: ${rx.form.get('CallDuration')} s`)
    const received = await readFile(join(domainFaxes, 'received_faxes', 'lane', 'in.tif'))
    t.equal(countTiffPages(received), PAGES, 'the received TIFF has the same pages')
  } finally {
    await real.tap.api(`uuid_kill ${a}`)
    await real.idle(30_000)
  }
}
