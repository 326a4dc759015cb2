/**
 * Self-signed certificates for the TLS tests, made by the openssl command line (present on
 * Debian and on CI; no npm dependency): an EC P-256 key and a certificate for `localhost` and
 * 127.0.0.1, valid two days. Each certificate is its own CA: a client trusting it (`ca`) can
 * verify the daemon's listener, a client trusting another one cannot.
 */
import { execFileSync } from 'node:child_process'
import { X509Certificate } from 'node:crypto'
import { cpSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const REPO = fileURLToPath(new URL('../../', import.meta.url))

export interface CertPair {
  readonly certFile: string
  readonly keyFile: string
  readonly cert: Buffer
  readonly key: Buffer
  /** SHA-256 fingerprint as a TLS peer certificate reports it (`AA:BB:...`). */
  readonly fingerprint256: string
}

/** Why the TLS tests cannot run here, or undefined when openssl is on the PATH. */
export const noOpenssl: string | undefined = (() => {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' })
    return undefined
  } catch {
    return 'the openssl command is not installed (apt-get install openssl)'
  }
})()

/** Writes `<name>.cert.pem` and `<name>.key.pem` into `dir`. */
export function makeCertPair(dir: string, name: string): CertPair {
  const certFile = join(dir, `${name}.cert.pem`)
  const keyFile = join(dir, `${name}.key.pem`)
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '2', '-subj', `/CN=${name}`,
      '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1', '-keyout', keyFile, '-out', certFile],
    { stdio: 'ignore' },
  )
  const cert = readFileSync(certFile)
  return { certFile, keyFile, cert, key: readFileSync(keyFile), fingerprint256: new X509Certificate(cert).fingerprint256 }
}

/**
 * A daemon.yaml in `dir` for the simulator with `http.tls` (paths as written, relative to `dir`
 * unless absolute) and `http.request_timeout_ms`, and the shipped example domain beside it: the
 * file the TLS tests load.
 */
export function writeTlsConfig(dir: string, tls: { readonly cert_file: string; readonly key_file: string }, requestTimeoutMs = 30_000): string {
  const file = join(dir, 'daemon.yaml')
  writeFileSync(
    file,
    [
      `http: { host: 127.0.0.1, port: 0, request_timeout_ms: ${requestTimeoutMs}, tls: { cert_file: ${JSON.stringify(tls.cert_file)}, key_file: ${JSON.stringify(tls.key_file)} } }`,
      'freeswitch: { mode: simulator }',
      'xml_curl: { username: freeswitch, password: xml-curl-secret }',
      'directory: domains',
      '',
    ].join('\n'),
  )
  cpSync(join(REPO, 'conf/domains'), join(dir, 'domains'), { recursive: true })
  return file
}
