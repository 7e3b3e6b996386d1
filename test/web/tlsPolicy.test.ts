/**
 * The client-certificate policies (src/web/tlsPolicy.ts): what each asks of Node's TLS server and
 * which handshakes it accepts afterwards. Over real TLS, with certificates, in server.test.ts.
 */
import type { TLSSocket } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { CLIENT_CERT_POLICY, tlsServerOptions } from '../../src/web/tlsPolicy.js';
import type { WebTlsConfig } from '../../src/web/webConfig.js';

const socket = (presented: boolean, authorized: boolean) =>
  ({ getPeerX509Certificate: () => (presented ? {} : undefined), authorized }) as unknown as TLSSocket;

const handshakes = { none: socket(false, false), unverified: socket(true, false), verified: socket(true, true) };

const accepted = (policy: keyof typeof CLIENT_CERT_POLICY) =>
  Object.entries(handshakes)
    .filter(([, peer]) => CLIENT_CERT_POLICY[policy].accept(peer))
    .map(([name]) => name);

describe('client certificate policies', () => {
  it('accept the handshakes exporter-toolkit accepts', () => {
    expect(accepted('NoClientCert')).toEqual(['none', 'unverified', 'verified']);
    expect(accepted('RequestClientCert')).toEqual(['none', 'unverified', 'verified']);
    expect(accepted('RequireAnyClientCert')).toEqual(['unverified', 'verified']);
    expect(accepted('VerifyClientCertIfGiven')).toEqual(['none', 'verified']);
    expect(accepted('RequireAndVerifyClientCert')).toEqual(['verified']);
  });

  it('ask for a certificate unless none is wanted, and let OpenSSL refuse only when one must verify', () => {
    const asks = Object.fromEntries(Object.entries(CLIENT_CERT_POLICY).map(([name, policy]) => [name, [policy.requestCert, policy.rejectUnauthorized]]));
    expect(asks).toEqual({
      NoClientCert: [false, false],
      RequestClientCert: [true, false],
      RequireAnyClientCert: [true, false],
      VerifyClientCertIfGiven: [true, false],
      RequireAndVerifyClientCert: [true, true],
    });
  });

  it('build the server options from the TLS configuration', () => {
    const tls: WebTlsConfig = { cert: Buffer.from('c'), key: Buffer.from('k'), clientCa: undefined, minVersion: 'TLSv1.2', maxVersion: 'TLSv1.3', clientAuth: 'RequireAndVerifyClientCert' };
    expect(tlsServerOptions(tls)).toEqual({ cert: tls.cert, key: tls.key, ca: undefined, minVersion: 'TLSv1.2', maxVersion: 'TLSv1.3', requestCert: true, rejectUnauthorized: true });
  });
});
