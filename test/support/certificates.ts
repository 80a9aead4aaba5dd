import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A certificate and its key, as PEM files and as text. */
export interface Issued {
  certPath: string;
  keyPath: string;
  cert: string;
  key: string;
}

/**
 * A folder of test certificates made with the openssl command (RSA keys, which every TLS stack
 * takes): authorities, and leaf certificates they sign. Removed when the process exits.
 */
export class TestPki {
  readonly dir = mkdtempSync(join(tmpdir(), 'cauri-pki-'));

  constructor() {
    process.once('exit', () => rmSync(this.dir, { recursive: true, force: true }));
  }

  #read(name: string): Issued {
    const certPath = join(this.dir, `${name}.pem`);
    const keyPath = join(this.dir, `${name}.key`);
    return { certPath, keyPath, cert: readFileSync(certPath, 'utf8'), key: readFileSync(keyPath, 'utf8') };
  }

  /** A self-signed certificate authority. */
  authority(name: string): Issued {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '2',
        '-subj',
        `/CN=${name}`,
        '-addext',
        'basicConstraints=critical,CA:TRUE',
        '-addext',
        'keyUsage=critical,keyCertSign,cRLSign',
        '-keyout',
        join(this.dir, `${name}.key`),
        '-out',
        join(this.dir, `${name}.pem`),
      ],
      { stdio: 'pipe' },
    );
    return this.#read(name);
  }

  /**
   * A certificate for `cn` signed by `issuer`: a server's (names in `dns` and `ip` as its subject
   * alternative names) or a client's, valid two days.
   */
  leaf(name: string, cn: string, issuer: Issued, options: { dns?: string[]; ip?: string[]; client?: boolean } = {}): Issued {
    const csr = join(this.dir, `${name}.csr`);
    execFileSync(
      'openssl',
      ['req', '-new', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=${cn}`, '-keyout', join(this.dir, `${name}.key`), '-out', csr],
      { stdio: 'pipe' },
    );
    const names = [...(options.dns ?? []).map((d) => `DNS:${d}`), ...(options.ip ?? []).map((i) => `IP:${i}`)];
    const ext = join(this.dir, `${name}.ext`);
    writeFileSync(
      ext,
      [
        ...(names.length > 0 ? [`subjectAltName=${names.join(',')}`] : []),
        `extendedKeyUsage=${options.client === true ? 'clientAuth' : 'serverAuth'}`,
        'basicConstraints=CA:FALSE',
        '',
      ].join('\n'),
    );
    execFileSync(
      'openssl',
      [
        'x509',
        '-req',
        '-in',
        csr,
        '-CA',
        issuer.certPath,
        '-CAkey',
        issuer.keyPath,
        '-CAcreateserial',
        '-days',
        '2',
        '-extfile',
        ext,
        '-out',
        join(this.dir, `${name}.pem`),
      ],
      { stdio: 'pipe' },
    );
    return this.#read(name);
  }
}
