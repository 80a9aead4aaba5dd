import { X509Certificate, createPrivateKey, type KeyObject } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import type { FixTlsMaterial } from './credentials.js';

/** What an operator gives for a partner's TLS: PEM text, each part optional. */
export interface TlsInput {
  readonly cert?: string;
  readonly key?: string;
  readonly ca?: string;
}

/** One certificate as the operator sees it. */
export interface CertificateSummary {
  readonly subject: string;
  readonly issuer: string;
  readonly valid_to: string;
  readonly fingerprint_sha256: string;
}

export interface TlsMaterialSummary {
  readonly client_cert: CertificateSummary | null;
  readonly ca: CertificateSummary[] | null;
}

export class TlsMaterialError extends Error {
  override name = 'TlsMaterialError';
}

const CERTIFICATE_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** The certificates of a PEM text, in order; refuses a text that has none or one that does not parse. */
function certificates(pem: string, what: string): X509Certificate[] {
  const blocks = pem.match(CERTIFICATE_BLOCK) ?? [];
  if (blocks.length === 0) throw new TlsMaterialError(`${what}: no PEM certificate (-----BEGIN CERTIFICATE-----) found`);
  return blocks.map((block, i) => {
    try {
      return new X509Certificate(block);
    } catch (error) {
      throw new TlsMaterialError(
        `${what}: certificate ${i + 1} does not parse (${error instanceof Error ? error.message : String(error)})`,
      );
    }
  });
}

function checkDates(cert: X509Certificate, what: string, now: number): void {
  if (Date.parse(cert.validFrom) > now)
    throw new TlsMaterialError(
      `${what}: ${cert.subject.replaceAll('\n', ', ')} is not valid before ${new Date(cert.validFrom).toISOString()}`,
    );
  if (Date.parse(cert.validTo) <= now)
    throw new TlsMaterialError(`${what}: ${cert.subject.replaceAll('\n', ', ')} expired on ${new Date(cert.validTo).toISOString()}`);
}

function privateKey(pem: string): KeyObject {
  if (/-----BEGIN ENCRYPTED PRIVATE KEY-----|Proc-Type: 4,ENCRYPTED/.test(pem)) {
    throw new TlsMaterialError(
      'key: the private key is encrypted; give it unencrypted (it is stored sealed with the master key), e.g. openssl pkey -in key.pem -out plain.pem',
    );
  }
  try {
    return createPrivateKey(pem);
  } catch (error) {
    throw new TlsMaterialError(`key: not a PEM private key (${error instanceof Error ? error.message : String(error)})`);
  }
}

function summary(cert: X509Certificate): CertificateSummary {
  return {
    subject: cert.subject.replaceAll('\n', ', '),
    issuer: cert.issuer.replaceAll('\n', ', '),
    valid_to: new Date(cert.validTo).toISOString(),
    fingerprint_sha256: cert.fingerprint256,
  };
}

/**
 * The partner's TLS material after the operator's input: a client certificate and its key replace
 * the stored pair (they come together), a CA bundle replaces the stored one, and what the input
 * leaves out is kept. Checked before anything is stored: every certificate parses and is valid now,
 * the key is an unencrypted private key that belongs to the certificate (the first of `cert`; the
 * rest is its chain), and Node.js's TLS accepts the whole.
 */
export function mergeTlsMaterial(current: FixTlsMaterial | null, input: TlsInput, now: number): FixTlsMaterial {
  if ((input.cert === undefined) !== (input.key === undefined))
    throw new TlsMaterialError('a client certificate and its private key go together: give both --cert and --key');
  let clientCert = current?.client_cert ?? null;
  let clientKey = current?.client_key ?? null;
  let ca = current?.ca ?? null;
  if (input.cert !== undefined && input.key !== undefined) {
    const chain = certificates(input.cert, 'cert');
    const leaf = chain[0] as X509Certificate;
    for (const cert of chain) checkDates(cert, 'cert', now);
    if (!leaf.checkPrivateKey(privateKey(input.key)))
      throw new TlsMaterialError(`key: the private key does not belong to the certificate ${leaf.subject.replaceAll('\n', ', ')}`);
    clientCert = input.cert.trim() + '\n';
    clientKey = input.key.trim() + '\n';
  }
  if (input.ca !== undefined) {
    for (const cert of certificates(input.ca, 'ca')) checkDates(cert, 'ca', now);
    ca = input.ca.trim() + '\n';
  }
  const material: FixTlsMaterial = { client_cert: clientCert, client_key: clientKey, ca };
  try {
    createSecureContext(tlsOptions(material));
  } catch (error) {
    throw new TlsMaterialError(`TLS refuses this material: ${error instanceof Error ? error.message : String(error)}`);
  }
  return material;
}

/** The options of node:tls's connect() that the material sets. */
export function tlsOptions(material: FixTlsMaterial | null): { cert?: string; key?: string; ca?: string } {
  if (material === null) return {};
  return {
    ...(material.client_cert !== null && material.client_key !== null ? { cert: material.client_cert, key: material.client_key } : {}),
    ...(material.ca !== null ? { ca: material.ca } : {}),
  };
}

/** What is stored, without the key: for the operator's confirmation. */
export function summariseTlsMaterial(material: FixTlsMaterial | null): TlsMaterialSummary {
  const leaf = material?.client_cert == null ? null : (certificates(material.client_cert, 'cert')[0] as X509Certificate);
  return {
    client_cert: leaf === null ? null : summary(leaf),
    ca: material?.ca == null ? null : certificates(material.ca, 'ca').map(summary),
  };
}
