import fs from 'node:fs/promises';
import path from 'node:path';
import { generate } from 'selfsigned';
import type { Config } from '../config.ts';

export interface TlsMaterial {
  key: string;
  cert: string;
  selfSigned: boolean;
}

/** The operator's certificate when given; else one self-signed certificate, made on the first start and kept. */
export async function loadTls(config: Pick<Config, 'tlsCertFile' | 'tlsKeyFile' | 'dataDir'>): Promise<TlsMaterial> {
  if (config.tlsCertFile && config.tlsKeyFile) {
    const [cert, key] = await Promise.all([fs.readFile(config.tlsCertFile, 'utf8'), fs.readFile(config.tlsKeyFile, 'utf8')]);
    return { cert, key, selfSigned: false };
  }
  const dir = path.join(config.dataDir, 'tls');
  const certFile = path.join(dir, 'self-signed-cert.pem');
  const keyFile = path.join(dir, 'self-signed-key.pem');
  try {
    const [cert, key] = await Promise.all([fs.readFile(certFile, 'utf8'), fs.readFile(keyFile, 'utf8')]);
    return { cert, key, selfSigned: true };
  } catch {
    // not made yet
  }
  const notAfter = new Date();
  notAfter.setFullYear(notAfter.getFullYear() + 2);
  const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notAfterDate: notAfter,
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
          { type: 7, ip: '::1' },
        ],
      },
    ],
  });
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  // Written key-first with exclusive create: two processes starting at once keep the first pair.
  try {
    await fs.writeFile(keyFile, pems.private, { mode: 0o600, flag: 'wx' });
    await fs.writeFile(certFile, pems.cert, { flag: 'wx' });
    return { cert: pems.cert, key: pems.private, selfSigned: true };
  } catch {
    await new Promise((r) => setTimeout(r, 200));
    const [cert, key] = await Promise.all([fs.readFile(certFile, 'utf8'), fs.readFile(keyFile, 'utf8')]);
    return { cert, key, selfSigned: true };
  }
}
