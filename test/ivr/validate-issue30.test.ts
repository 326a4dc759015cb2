/**
 * Issue 30: `cod ivr validate` (the daemon's parser, src/cli/ivr-validate.ts) accepts a document
 * using Record, GetInput, SendFax and ReceiveFax, and refuses each bad one with the daemon's
 * message: a bad Record or GetInput attribute, a hostile fax file name, a bad header, and
 * SendSMS / AddJob as elements this daemon does not support.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { codHere, tempDir } from '../cli/run-cod.js'

const GOOD = `<IVR>
  <Answer/>
  <Record action="https://app.example.test/recorded" maxLength="120" timeout="5" finishOnKey="#" playBeep="true"/>
  <GetInput action="https://app.example.test/input" numDigits="1" language="en-US" speechTimeout="4" profanityFilter="false" hints="sales, support"><Speak>Say sales or support</Speak></GetInput>
  <SendFax header="ACME 03-1234-5678">invoices/2025-001.tif</SendFax>
  <ReceiveFax>orders/{{ CallUUID }}.tif</ReceiveFax>
  <If expr="FaxResultCode == '0'"><Then><Hangup/></Then></If>
</IVR>
`

const BAD: ReadonlyArray<readonly [string, string, RegExp]> = [
  ['record-length', '<IVR><Record maxLength="0"/></IVR>', /\(\/IVR\/Record\[1\]\): Record maxLength "0": must be a whole number from 1 to 3600$/],
  ['record-timeout', '<IVR><Record timeout="61"/></IVR>', /Record timeout "61": must be a whole number from 1 to 60$/],
  ['record-beep', '<IVR><Record playBeep="perhaps"/></IVR>', /Record playBeep "perhaps": must be true or false$/],
  ['input-speech-timeout', '<IVR><GetInput speechTimeout="0"/></IVR>', /\(\/IVR\/GetInput\[1\]\): GetInput speechTimeout "0": must be a whole number from 1 to 60$/],
  ['input-profanity', '<IVR><GetInput profanityFilter="maybe"/></IVR>', /GetInput profanityFilter "maybe": must be true or false$/],
  ['input-language', '<IVR><GetInput language="english please"/></IVR>', /GetInput language "english please": must be a BCP 47 language tag such as en-US or ja-JP$/],
  ['sms', '<IVR>\n  <SendSMS to="0901234567">hello</SendSMS>\n</IVR>\n', /line 2, column 3 \(\/IVR\/SendSMS\[1\]\): <SendSMS> is not supported by this daemon \(it needs an SMS service\)$/],
  ['job', '<IVR>\n  <Section name="s"><AddJob/></Section>\n</IVR>\n', /\(\/IVR\/Section\[1\]\/AddJob\[1\]\): <AddJob> is not supported by this daemon \(it needs a job scheduling service\)$/],
  ['path', '<IVR><SendFax>../../etc/passwd.tif</SendFax></IVR>', /SendFax text .*must be a TIFF file path .*has a "\.\." folder/],
  ['module', '<IVR><ReceiveFax>shout://x.example.test/a.tif</ReceiveFax></IVR>', /ReceiveFax text .*names a FreeSWITCH file module/],
  ['header', '<IVR><SendFax header="this header is far too long">a.tif</SendFax></IVR>', /SendFax header .*must be up to 20 printable ASCII characters/],
]

t.test('cod ivr validate: a document with the four elements passes; each bad one is refused (exit 1)', async (t) => {
  const dir = tempDir(t, 'ivr-issue30')
  const good = join(dir, 'all.xml')
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
