/**
 * The API listener's certificate and key (`http.tls`, docs/deploy.md "HTTPS"): read from their
 * PEM files and checked as a pair before anything uses them. The configuration loader reads them
 * (src/config/load.ts), so that a start, a reload (SIGHUP) and `cod check-config` refuse the same
 * files for the same reasons, each problem naming the file at fault.
 */
import { X509Certificate, createPrivateKey, type KeyObject } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import type { Server } from 'node:http'
import { Server as HttpsServer } from 'node:https'
import { createSecureContext, type SecureContextOptions } from 'node:tls'
import type { Logger } from '../util/logger.js'
import { err, ok, type Result } from '../util/result.js'

/**
 * Older protocols are refused whatever the process's defaults (`--tls-min-v1.0`, an OpenSSL
 * configuration with a lower security level): TLS 1.0 and 1.1 lack the modern AEAD ciphers
 * and are deprecated (RFC 8996).
 */
const MIN_TLS_VERSION = 'TLSv1.2'

export interface TlsFiles {
  /** PEM certificate, the server's first, then its intermediates (a chain file). */
  readonly certFile: string
  /** PEM private key of the first certificate, unencrypted (the daemon asks no passphrase). */
  readonly keyFile: string
}

export interface TlsCredentials extends TlsFiles {
  readonly cert: Buffer
  readonly key: Buffer
  /** The first certificate's subject and expiry (for the log). */
  readonly subject: string
  readonly validTo: Date
}

/** Which of the two files is at fault, and why (the reason names the file). */
export interface TlsProblem {
  readonly file: 'cert_file' | 'key_file'
  readonly reason: string
}

const problem = (file: TlsProblem['file'], reason: string): Result<never, TlsProblem> => err({ file, reason })

/** OpenSSL's reasons end with the useful part ("error:0480006C:PEM routines::no start line"). */
const opensslReason = (e: unknown): string => {
  const message = e instanceof Error ? e.message : String(e)
  return message.split('::').pop() ?? message
}

async function readPem(path: string): Promise<Result<Buffer, string>> {
  try {
    return ok(await readFile(path))
  } catch (e) {
    return err(`cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`)
  }
}

/** Reads both files and checks that they are a PEM certificate and the private key of it. */
export async function readTlsCredentials(files: TlsFiles): Promise<Result<TlsCredentials, TlsProblem>> {
  const { certFile, keyFile } = files
  const cert = await readPem(certFile)
  if (!cert.ok) return problem('cert_file', cert.error)
  const key = await readPem(keyFile)
  if (!key.ok) return problem('key_file', key.error)

  let x509: X509Certificate
  try {
    x509 = new X509Certificate(cert.value)
  } catch (e) {
    return problem('cert_file', `${certFile} is not a PEM certificate: ${opensslReason(e)}`)
  }
  let privateKey: KeyObject
  try {
    privateKey = createPrivateKey(key.value)
  } catch (e) {
    // OpenSSL only says "interrupted or cancelled" when it had no passphrase to ask for.
    if (/-----BEGIN ENCRYPTED PRIVATE KEY-----|Proc-Type: 4,ENCRYPTED/.test(key.value.toString('latin1'))) {
      return problem('key_file', `${keyFile} is passphrase-protected: the daemon asks for no passphrase; keep the key unencrypted, readable by the daemon's user only`)
    }
    return problem('key_file', `${keyFile} is not an unencrypted PEM private key: ${opensslReason(e)}`)
  }
  if (!x509.checkPrivateKey(privateKey)) {
    return problem('key_file', `${keyFile} is not the private key of the certificate in ${certFile}`)
  }
  const credentials: TlsCredentials = { certFile, keyFile, cert: cert.value, key: key.value, subject: x509.subject, validTo: new Date(x509.validTo) }
  // What the listener will do with them, now: a chain that does not parse, a key too weak for
  // OpenSSL's security level, fail here and not at the listener.
  try {
    createSecureContext(secureContextOptions(credentials))
  } catch (e) {
    return problem('cert_file', `${certFile} with ${keyFile}: ${opensslReason(e)}`)
  }
  return ok(credentials)
}

/** The listener's TLS options: at start (https.createServer) and at each reload (setSecureContext). */
export const secureContextOptions = (c: TlsCredentials): SecureContextOptions => ({ cert: c.cert, key: c.key, minVersion: MIN_TLS_VERSION })

/**
 * `http.tls` at a reload (SIGHUP): the loader has read and checked the new pair (a bad one
 * refused the whole reload, the running pair stays); the HTTPS listener uses it for its next
 * connections. HTTP and HTTPS are not swapped under running clients: that waits for a restart.
 */
export function reloadCertificate(server: Server, next: TlsCredentials | undefined, logger: Logger): Result<void, string> {
  if (!(server instanceof HttpsServer) || next === undefined) {
    if ((server instanceof HttpsServer) !== (next !== undefined)) logger.warn('http.tls added or removed: the API listener switches between HTTP and HTTPS at the next start only')
    return ok(undefined)
  }
  try {
    server.setSecureContext(secureContextOptions(next))
  } catch (e) {
    return err(`${next.certFile} with ${next.keyFile}: ${(e as Error).message}; the running certificate stays`)
  }
  logger.info({ cert_file: next.certFile, subject: next.subject, valid_to: next.validTo.toISOString() }, 'TLS certificate reloaded: new connections get it')
  return ok(undefined)
}
