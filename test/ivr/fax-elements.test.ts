/**
 * Issue 30 items 3-6: `<SendFax>` and `<ReceiveFax>` (src/ivr/elements/send-fax.ts,
 * receive-fax.ts, src/ivr/fax/), on the runner with the fake FreeSWITCH: every attribute's bad
 * value with its message, hostile file names refused for both elements (at validation, and from
 * a template at run time, FreeSWITCH never getting one), a missing file ending the call with an
 * Error naming it, received faxes' folders made, the fax's results as call parameters, and
 * `CallStatus=completed` with the call's duration at the end of a fetched document's call.
 * SendSMS and AddJob are refused as not supported (not as unknown).
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { daemonSchema, domainSchema } from '../../src/config/schema.js'
import { parseIvrDocument } from '../../src/ivr/document/index.js'
import { faxPath, readFaxName } from '../../src/ivr/fax/fax-name.js'
import { runtimeOf } from '../../src/runtime/store.js'
import type { ExecRecord, ExecReply } from '../support/fake-pbx.js'
import { DOMAIN, MENU_URL, rig, wrap, type Rig } from './runner/helpers.js'

/** Names that must never reach txfax/rxfax, with why. */
const HOSTILE: readonly (readonly [string, RegExp])[] = [
  ['/etc/passwd.tif', /is an absolute path/],
  ['/var/spool/fax/a.tif', /is an absolute path/],
  ['../other.example.test/a.tif', /has a "\.\." folder/],
  ['in/../../x.tif', /has a "\.\." folder/],
  ['./a.tif', /has a "\." folder/],
  ['.hidden.tif', /starting with "\."/],
  ['%2e%2e/%2e%2e/etc/x.tif', /not percent-decoded/],
  ['..%2fx.tif', /not percent-decoded/],
  ['\u2025/x.tif', /outside A-Z a-z 0-9 _ \. -/],
  ['\uff0e\uff0e/x.tif', /outside A-Z a-z 0-9 _ \. -/],
  ['a\u2215b.tif', /outside A-Z a-z 0-9 _ \. -/],
  ['caf\u00e9.tif', /outside A-Z a-z 0-9 _ \. -/],
  ['${base_dir}/x.tif', /contains "\$"/],
  ['$${sounds_dir}/x.tif', /contains "\$"/],
  ['${system(id)}.tif', /contains "\$"/],
  ['shout://evil.example.test/a.tif', /FreeSWITCH file module/],
  ['http_cache://http://127.0.0.1/a.tif', /FreeSWITCH file module/],
  ['file_string://a.tif!/etc/x.tif', /FreeSWITCH file module/],
  ['https://fax.example.test/a.tif', /FreeSWITCH file module/],
  ['C:/fax/a.tif', /drive letter/],
  ['~/a.tif', /starts with "~"/],
  ['a\\b.tif', /backslash/],
  ['{timeout=1}a.tif', /file parameters/],
  ['a b.tif', /white space/],
  ['a//b.tif', /empty folder name/],
  ['report.pdf', /does not end in \.tif or \.tiff/],
  ['', /is empty/],
]

/** XML text for a name (control characters cannot be written at all). */
const escape = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;')
const show = (s: string): string => JSON.stringify(s).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)

const refusal = (xml: string): string => {
  const r = parseIvrDocument(xml)
  return r.ok ? '' : r.error.reason
}

t.test('the fax file rule: plain relative TIFF names pass, every hostile name is refused with the rule it broke', async (t) => {
  for (const good of ['a.tif', 'invoices/2025-001.TIFF', 'x_y-z.1.tiff']) t.same(readFaxName(good), { ok: true, value: good }, good)
  for (const [name, why] of HOSTILE) {
    const r = readFaxName(name)
    t.equal(r.ok, false, show(name))
    if (!r.ok) t.match(r.error, why, show(name))
    t.equal(faxPath('/faxes', DOMAIN, name).ok, false, `${show(name)}: refused at the join too`)
  }
})

t.test('both elements refuse every hostile name at validation, naming the element and the rule', async (t) => {
  for (const [name, why] of HOSTILE) {
    if (name === '') {
      t.match(refusal(wrap('<SendFax></SendFax>')), /<SendFax> needs text: the TIFF file to send/)
      t.match(refusal(wrap('<ReceiveFax> </ReceiveFax>')), /<ReceiveFax> needs text: the TIFF file to write under received_faxes\//)
      continue
    }
    t.match(refusal(wrap(`<SendFax>${escape(name)}</SendFax>`)), /\/IVR\/SendFax\[1\]\): SendFax .*must be a TIFF file path relative to the domain's fax folder/, `SendFax ${show(name)}`)
    t.match(refusal(wrap(`<ReceiveFax>${escape(name)}</ReceiveFax>`)), why, `ReceiveFax ${show(name)}`)
  }
})

t.test('attributes: header is at most 20 printable ASCII characters without $ or \\; ReceiveFax takes none', async (t) => {
  t.ok(parseIvrDocument(wrap('<SendFax header="ACME Fax 0312345678">a.tif</SendFax><ReceiveFax>in/b.tif</ReceiveFax>')).ok, 'a valid pair')
  t.ok(parseIvrDocument(wrap(`<SendFax header="${'x'.repeat(20)}">a.tif</SendFax>`)).ok, '20 characters')
  const rule = /SendFax header .*must be up to 20 printable ASCII characters \(no \$ or \\\)/
  t.match(refusal(wrap(`<SendFax header="${'x'.repeat(21)}">a.tif</SendFax>`)), rule, '21 characters')
  t.match(refusal(wrap('<SendFax header="日本語">a.tif</SendFax>')), rule, 'non-ASCII')
  t.match(refusal(wrap('<SendFax header="a${x}">a.tif</SendFax>')), rule, 'an expansion')
  t.match(refusal(wrap('<SendFax header="a\\b">a.tif</SendFax>')), rule, 'a backslash')
  t.match(refusal(wrap('<SendFax header="a&#9;b">a.tif</SendFax>')), rule, 'a tab')
  t.match(refusal(wrap('<SendFax pages="2">a.tif</SendFax>')), /unknown attribute "pages" on <SendFax> \(allowed: header\)/)
  t.match(refusal(wrap('<ReceiveFax header="x">a.tif</ReceiveFax>')), /unknown attribute "header" on <ReceiveFax> \(it takes no attributes\)/)
  t.match(refusal(wrap('<SendFax/>')), /SendFax/, 'no file')
  t.match(refusal(wrap('<ReceiveFax><Play>a.wav</Play></ReceiveFax>')), /ReceiveFax/, 'a child element')
})

t.test('SendSMS and AddJob: refused as not supported by this daemon, wherever they are, never as unknown', async (t) => {
  for (const el of ['<SendSMS to="0901234567">hi</SendSMS>', '<AddJob/>']) {
    const name = el.slice(1, el.search(/[ />]/))
    for (const xml of [wrap(el), wrap(`<Section name="s">${el}</Section>`), wrap(`<If expr="1"><Then>${el}</Then></If>`), wrap(`<GetDigits>${el}</GetDigits>`)]) {
      const reason = refusal(xml)
      t.match(reason, new RegExp(`<${name}> is not supported by this daemon \\(it needs an? `), xml)
      t.notMatch(reason, /unknown element/, xml)
    }
  }
  t.match(refusal(wrap('<sendsms/>')), /unknown element <sendsms>/, 'a wrong case is still unknown')
})

/** A runner whose fax folder is a temporary folder of this test. */
function faxRig(t: Parameters<typeof rig>[0], script?: (rec: ExecRecord, i: number) => ExecReply | undefined): { r: Rig; dir: string; domainDir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'cod-fax-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const daemon = daemonSchema.parse({
    freeswitch: { mode: 'simulator' },
    xml_curl: { username: 'freeswitch', password: 'xml-curl-secret' },
    ivr: { fax_dir: join(dir, 'faxes') },
  })
  const domain = domainSchema.parse({
    name: DOMAIN,
    api_tokens: ['plain-token-for-tests'],
    channel_limit: 20,
    gateway: 'pstn',
    users: [{ id: '1', name: 'alice', extension: '1001', password: 'alice-sip-secret' }],
    extensions: [{ number: '3001', xml_url: MENU_URL }],
  })
  const rt = runtimeOf({ file: join(dir, 'daemon.yaml'), daemon, domains: [domain] })
  const r = rig(t, { deps: { runtime: () => rt }, ...(script !== undefined ? { script } : {}) })
  const domainDir = join(dir, 'faxes', DOMAIN)
  mkdirSync(domainDir, { recursive: true })
  return { r, dir, domainDir }
}

/** FreeSWITCH's variables after a 3-page fax (test/fixtures/freeswitch/esl/45-txfax-rxfax-loopback.txt). */
const FAX_OK = { fax_success: '1', fax_result_code: '0', fax_result_text: 'OK', fax_document_transferred_pages: '3' }

const faxScript = (vars: Record<string, string>) => (rec: ExecRecord): ExecReply | undefined =>
  rec.app === 'txfax' || rec.app === 'rxfax' ? { kind: 'complete', vars } : undefined

async function runFetched(r: Rig, xml: string): Promise<void> {
  r.fetcher.docs.set(MENU_URL, xml)
  r.parkExtension()
  await r.settle()
}

t.test('SendFax: the header set, txfax of the confined path, the results posted with CallStatus=completed at the end', async (t) => {
  const { r, domainDir } = faxRig(t, faxScript(FAX_OK))
  mkdirSync(join(domainDir, 'invoices'))
  writeFileSync(join(domainDir, 'invoices', 'a.tif'), 'II*\0')
  await runFetched(r, wrap('<SendFax header="ACME 03-1234">invoices/a.tif</SendFax>'))
  const apps = r.pbx.apps(r.uuid)
  t.ok(apps.includes('set fax_header=ACME 03-1234'), 'the header, on every page')
  t.ok(apps.includes(`txfax ${join(domainDir, 'invoices', 'a.tif')}`), 'txfax of the file inside the domain folder')
  t.equal(r.fetcher.notices.length, 1, 'one notice at the end')
  const p = r.fetcher.notices[0]?.params ?? {}
  t.equal(r.fetcher.notices[0]?.url, MENU_URL)
  t.match(p, { CallStatus: 'completed', FaxOperation: 'transmission', FaxFilePath: 'invoices/a.tif', FaxResultCode: '0', FaxResultText: 'OK', FaxPages: '3' })
  t.match(p.CallDuration, /^\d+$/, 'the call duration, whole seconds')
  t.same(r.fetcher.reports, [], 'no error')
})

t.test('SendFax without a header unsets fax_header (an earlier one must not stay)', async (t) => {
  const { r, domainDir } = faxRig(t, faxScript(FAX_OK))
  writeFileSync(join(domainDir, 'a.tif'), 'II*\0')
  await runFetched(r, wrap('<SendFax>a.tif</SendFax>'))
  t.ok(r.pbx.apps(r.uuid).includes('unset fax_header'))
})

t.test('SendFax of a missing file: no txfax, the call ends with an Error naming the file', async (t) => {
  const { r } = faxRig(t, faxScript(FAX_OK))
  await runFetched(r, wrap('<SendFax>invoices/nope.tif</SendFax><Speak>not reached</Speak>'))
  t.notOk(r.pbx.apps(r.uuid).some((a) => a.startsWith('txfax') || a.startsWith('speak')), 'FreeSWITCH gets nothing to send')
  t.equal(r.fetcher.reports.length, 1)
  t.match(r.fetcher.reports[0]?.error, /SendFax: the file "invoices\/nope\.tif" is missing from the domain's fax folder/)
  t.equal(r.fetcher.notices[0]?.params.CallStatus, 'completed', 'and the call completed')
})

t.test('SendFax whose file FreeSWITCH cannot find (its own reply, esl/46) is the same runtime error', async (t) => {
  const { r, domainDir } = faxRig(t, (rec) => (rec.app === 'txfax' ? { kind: 'complete', response: 'Cannot send non-existant fax file' } : undefined))
  writeFileSync(join(domainDir, 'a.tif'), 'II*\0')
  await runFetched(r, wrap('<SendFax>a.tif</SendFax>'))
  t.match(r.fetcher.reports[0]?.error, /SendFax: the file "a\.tif" is missing \(FreeSWITCH: Cannot send non-existant fax file\)/)
})

t.test('a failed fax is no runtime error: the document reads its results (esl/47: no fax machine)', async (t) => {
  const failed = { fax_success: '0', fax_result_code: '2', fax_result_text: 'Timed out waiting for initial communication', fax_document_transferred_pages: '0' }
  const { r, domainDir } = faxRig(t, faxScript(failed))
  writeFileSync(join(domainDir, 'a.tif'), 'II*\0')
  await runFetched(r, wrap('<SendFax>a.tif</SendFax><If expr="FaxResultCode != \'0\'"><Then><Speak>{{ FaxResultText }}</Speak></Then></If>'))
  t.ok(r.pbx.apps(r.uuid).some((a) => a.startsWith('speak') && a.includes('Timed out waiting for initial communication')), 'the next element sees the result')
  t.match(r.fetcher.notices[0]?.params, { FaxResultCode: '2', FaxPages: '0', FaxOperation: 'transmission' })
})

t.test('ReceiveFax: folders made under received_faxes/, rxfax there, the results posted', async (t) => {
  const { r, domainDir } = faxRig(t, faxScript(FAX_OK))
  await runFetched(r, wrap('<ReceiveFax>orders/2025/today.tif</ReceiveFax>'))
  const target = join(domainDir, 'received_faxes', 'orders', '2025', 'today.tif')
  t.ok(existsSync(join(domainDir, 'received_faxes', 'orders', '2025')), 'the folders are made')
  t.ok(r.pbx.apps(r.uuid).includes(`rxfax ${target}`))
  t.match(r.fetcher.notices[0]?.params, { CallStatus: 'completed', FaxOperation: 'reception', FaxFilePath: 'received_faxes/orders/2025/today.tif', FaxResultCode: '0', FaxPages: '3' })
})

t.test('a symbolic link below the fax folder is never followed (ReceiveFax and SendFax)', async (t) => {
  const { r, dir, domainDir } = faxRig(t, faxScript(FAX_OK))
  const outside = join(dir, 'outside')
  mkdirSync(outside)
  writeFileSync(join(outside, 'secret.tif'), 'II*\0')
  mkdirSync(join(domainDir, 'received_faxes'))
  symlinkSync(outside, join(domainDir, 'received_faxes', 'in'))
  symlinkSync(outside, join(domainDir, 'out'))
  await runFetched(r, wrap('<SetErrorHandler>s</SetErrorHandler><ReceiveFax>in/x.tif</ReceiveFax><Section name="s"><SendFax>out/secret.tif</SendFax></Section>'))
  t.notOk(r.pbx.apps(r.uuid).some((a) => /^(rx|tx)fax/.test(a)), 'FreeSWITCH gets neither')
  t.match(r.fetcher.reports[0]?.error, /SendFax: "out\/secret\.tif": a symbolic link is in the way/)
})

t.test('a template that renders a hostile name is a runtime error, for both elements', async (t) => {
  for (const el of ['SendFax', 'ReceiveFax']) {
    const { r } = faxRig(t, faxScript(FAX_OK))
    await runFetched(r, wrap(`<Set var="n" val="../../etc/x.tif"/><${el}>{{ n }}</${el}>`))
    t.notOk(r.pbx.apps(r.uuid).some((a) => /^(rx|tx)fax/.test(a)), `${el}: FreeSWITCH gets nothing`)
    t.match(r.fetcher.reports[0]?.error, new RegExp(`${el} .*has a "\\.\\." folder`), el)
  }
})

t.test('CallStatus=completed: an inline document has no URL to tell; a caller who hangs up mid-document is told with the duration', async (t) => {
  const { r } = faxRig(t)
  r.parkInline(wrap('<Speak>hello</Speak>'))
  await r.settle()
  t.same(r.fetcher.notices, [], 'nothing for an inline document')

  const { r: r2 } = faxRig(t, (rec) => (rec.app === 'speak' ? { kind: 'hangup' } : undefined))
  await runFetched(r2, wrap('<Speak>hello</Speak><Speak>not reached</Speak>'))
  t.equal(r2.fetcher.notices.length, 1)
  t.match(r2.fetcher.notices[0]?.params, { CallStatus: 'completed', CallDuration: /^\d+$/ })
})
