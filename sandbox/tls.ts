/**
 * A throw-away certificate authority for the local sandbox: the news API simulator and the local
 * webhook and Slack receivers serve HTTPS with certificates it signs, and every client (the
 * provider client, moto server's HTTPS subscriptions) trusts it explicitly. TLS verification is
 * never turned off.
 */
import { generate } from 'selfsigned';

export interface PemPair {
  readonly cert: string;
  readonly key: string;
}

const validity = () => {
  const notBeforeDate = new Date(Date.now() - 60 * 60 * 1000);
  return { notBeforeDate, notAfterDate: new Date(notBeforeDate.getTime() + 30 * 24 * 60 * 60 * 1000) };
};

/** A new CA that can sign loopback server certificates. */
export async function createCertificateAuthority(): Promise<PemPair> {
  const pems = await generate([{ name: 'commonName', value: 'news-alerts local sandbox CA' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    ...validity(),
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
  });
  return { cert: pems.cert, key: pems.private };
}

/** A server certificate for `localhost`, `127.0.0.1` and `::1`, signed by `ca`. */
export async function issueLoopbackCertificate(ca: PemPair): Promise<PemPair> {
  const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    ...validity(),
    ca: { cert: ca.cert, key: ca.key },
    extensions: [
      { name: 'basicConstraints', cA: false, critical: true },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
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
  return { cert: pems.cert, key: pems.private };
}
