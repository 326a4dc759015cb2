/**
 * `http.tls`'s files as the loader reads them (src/net/tls.ts, src/config/load.ts): a good pair
 * loads, with its paths relative to daemon.yaml's folder; each bad case (a file missing, not
 * PEM, a key of another certificate, a passphrase-protected key, a key left out) is refused with
 * the key path and the file named, by the loader and so by `cod check-config`, which goes
 * through it (the start's refusal: test/api/tls.test.ts).
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { loadConfig } from '../../src/config/load.js'
import { readTlsCredentials } from '../../src/net/tls.js'
import { cod, codHere, tempDir } from '../cli/run-cod.js'
import { makeCertPair, noOpenssl, writeTlsConfig } from './certs.js'

t.setTimeout(120_000)
if (noOpenssl !== undefined) t.plan(0, noOpenssl)

t.test('a good pair: read, with the subject and expiry of its certificate', async (t) => {
  const dir = tempDir(t, 'tls')
  const pair = makeCertPair(dir, 'good')
  const r = await readTlsCredentials({ certFile: pair.certFile, keyFile: pair.keyFile })
  if (!r.ok) return t.fail(r.error.reason)
  t.same(r.value.cert, pair.cert)
  t.same(r.value.key, pair.key)
  t.equal(r.value.subject, 'CN=good')
  t.ok(r.value.validTo.getTime() > Date.now() + 86_400_000, 'valid two days')
})

t.test('each bad pair is refused, naming the file at fault', async (t) => {
  const dir = tempDir(t, 'tls')
  const a = makeCertPair(dir, 'a')
  const b = makeCertPair(dir, 'b')
  const missing = join(dir, 'missing.pem')
  const notPem = join(dir, 'not.pem')
  writeFileSync(notPem, 'not a certificate\n')
  const encrypted = join(dir, 'encrypted.key.pem')
  execFileSync('openssl', ['pkey', '-in', a.keyFile, '-aes256', '-passout', 'pass:secret', '-out', encrypted])

  const cases: Array<[string, string, string, 'cert_file' | 'key_file', RegExp]> = [
    ['no certificate file', missing, a.keyFile, 'cert_file', /^cannot read .*missing\.pem: ENOENT$/],
    ['no key file', a.certFile, missing, 'key_file', /^cannot read .*missing\.pem: ENOENT$/],
    ['a folder as certificate', dir, a.keyFile, 'cert_file', /^cannot read .*: EISDIR$/],
    ['a certificate file that is not PEM', notPem, a.keyFile, 'cert_file', /not\.pem is not a PEM certificate: /],
    ['a key file that is not PEM', a.certFile, notPem, 'key_file', /not\.pem is not an unencrypted PEM private key: /],
    ['the key and the certificate swapped', a.keyFile, a.certFile, 'cert_file', /a\.key\.pem is not a PEM certificate/],
    ['the key of another certificate', a.certFile, b.keyFile, 'key_file', /b\.key\.pem is not the private key of the certificate in .*a\.cert\.pem$/],
    ['a passphrase-protected key', a.certFile, encrypted, 'key_file', /encrypted\.key\.pem is passphrase-protected: the daemon asks for no passphrase/],
  ]
  for (const [what, certFile, keyFile, file, reason] of cases) {
    const r = await readTlsCredentials({ certFile, keyFile })
    t.notOk(r.ok, what)
    if (!r.ok) {
      t.equal(r.error.file, file, `${what}: ${file}`)
      t.match(r.error.reason, reason, `${what}: ${r.error.reason}`)
    }
  }
})

t.test('the loader: paths relative to daemon.yaml, problems under http.tls.*', async (t) => {
  const dir = tempDir(t, 'tls')
  mkdirSync(join(dir, 'tls'))
  const a = makeCertPair(join(dir, 'tls'), 'a')
  const b = makeCertPair(join(dir, 'tls'), 'b')
  const file = writeTlsConfig(dir, { cert_file: 'tls/a.cert.pem', key_file: 'tls/a.key.pem' })
  // Loaded from another working directory than daemon.yaml's: the paths are its folder's.
  t.not(process.cwd(), dir)
  const good = await loadConfig(file)
  if (!good.ok) return t.fail(good.error.map((p) => p.reason).join('\n'))
  t.equal(good.value.tls?.certFile, a.certFile)
  t.equal(good.value.tls?.keyFile, a.keyFile)
  t.equal(good.value.daemon.http.tls?.cert_file, 'tls/a.cert.pem', 'the file keeps what the operator wrote')

  writeTlsConfig(dir, { cert_file: 'tls/a.cert.pem', key_file: 'tls/b.key.pem' })
  const mismatched = await loadConfig(file)
  t.same(mismatched.ok ? [] : mismatched.error, [{ file, path: 'http.tls.key_file', reason: `${b.keyFile} is not the private key of the certificate in ${a.certFile}` }])

  writeFileSync(file, 'http: { tls: { cert_file: tls/a.cert.pem } }\nfreeswitch: { mode: simulator }\nxml_curl: { username: u, password: xml-curl-secret }\n')
  const noKey = await loadConfig(file)
  t.same(noKey.ok ? [] : noKey.error.map((p) => `${p.path}: ${p.reason}`), ['http.tls.key_file: is required: the PEM private key file'])

  writeFileSync(file, 'http: { tls: { cert_file: "", key_file: 5, ca_file: tls/ca.pem } }\nfreeswitch: { mode: simulator }\nxml_curl: { username: u, password: xml-curl-secret }\n')
  const badKeys = await loadConfig(file)
  t.same(badKeys.ok ? [] : badKeys.error.map((p) => `${p.path}: ${p.reason}`), ['http.tls.cert_file: must be a file path', 'http.tls.key_file: must be a file path', 'http.tls: Unrecognized key: "ca_file"'])
})

t.test('cod check-config refuses what the daemon would, naming the file (exit 1)', async (t) => {
  const dir = tempDir(t, 'tls')
  const a = makeCertPair(dir, 'a')
  const file = writeTlsConfig(dir, { cert_file: a.certFile, key_file: 'missing.key.pem' })
  const r = await cod(['check-config', file])
  t.equal(r.code, 1, r.stderr)
  t.equal(r.stdout, `${file}: http.tls.key_file: cannot read ${join(dir, 'missing.key.pem')}: ENOENT\n`)

  writeTlsConfig(dir, { cert_file: a.certFile, key_file: a.keyFile })
  const fixed = await codHere(['check-config', file])
  t.equal(fixed.code, 0, fixed.stdout)
  t.match(fixed.stdout, /: ok \(1 domain: example\.test\)/)
})
