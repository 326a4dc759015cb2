/**
 * Issue 30: `cod ivr validate` (the daemon's parser, src/cli/ivr-validate.ts) accepts a document
 * using SendFax and ReceiveFax, and refuses each bad one with the daemon's message: a hostile
 * fax file name, a bad header, and SendSMS / AddJob as elements this daemon does not support.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { codHere, tempDir } from '../cli/run-cod.js'

const GOOD = `<IVR>
  <Answer/>
  <SendFax header="ACME 03-1234-5678">invoices/2025-001.tif</SendFax>
  <ReceiveFax>orders/{{ CallUUID }}.tif</ReceiveFax>
  <If expr="FaxResultCode == '0'"><Then><Hangup/></Then></If>
</IVR>
`

const BAD: ReadonlyArray<readonly [string, string, RegExp]> = [
  ['sms', '<IVR>\n  <SendSMS to="0901234567">hello</SendSMS>\n</IVR>\n', /line 2, column 3 \(\/IVR\/SendSMS\[1\]\): <SendSMS> is not supported by this daemon \(it needs an SMS service\)$/],
  ['job', '<IVR>\n  <Section name="s"><AddJob/></Section>\n</IVR>\n', /\(\/IVR\/Section\[1\]\/AddJob\[1\]\): <AddJob> is not supported by this daemon \(it needs a job scheduling service\)$/],
  ['path', '<IVR><SendFax>../../etc/passwd.tif</SendFax></IVR>', /SendFax text .*must be a TIFF file path .*has a "\.\." folder/],
  ['module', '<IVR><ReceiveFax>shout://x.example.test/a.tif</ReceiveFax></IVR>', /ReceiveFax text .*names a FreeSWITCH file module/],
  ['header', '<IVR><SendFax header="this header is far too long">a.tif</SendFax></IVR>', /SendFax header .*must be up to 20 printable ASCII characters/],
]

t.test('cod ivr validate: a document with both fax elements passes; each bad one is refused (exit 1)', async (t) => {
  const dir = tempDir(t, 'ivr-fax')
  const good = join(dir, 'fax.xml')
  writeFileSync(good, GOOD)
  const ok = await codHere(['ivr', 'validate', good])
  t.equal(ok.code, 0, ok.stdout)
  t.equal(ok.stdout, `${good}: ok\n`)
  for (const [name, xml, message] of BAD) {
    const file = join(dir, `${name}.xml`)
    writeFileSync(file, xml)
    const r = await codHere(['ivr', 'validate', file])
    t.equal(r.code, 1, name)
    t.match(r.stdout.trim(), message, name)
    t.notMatch(r.stdout, /unknown element/, `${name}: never "unknown element"`)
  }
})
