/**
 * The TLS client-certificate policy of the web listener (exporter-toolkit's client_auth_type):
 * how each policy maps onto Node's TLS server, the check after the handshake for what Node
 * cannot express, and applying a reloaded policy and certificates to a running server.
 */
import type https from 'node:https';
import type { TLSSocket } from 'node:tls';
import type { ClientAuthType, WebConfig, WebTlsConfig } from './webConfig.js';

/**
 * How each policy maps onto Node: whether the server asks for a certificate, whether OpenSSL
 * drops the connection when it does not verify, and the check made once the handshake is done
 * for what Node cannot express (a certificate that is required but not verified, or verified
 * only when given).
 */
export const CLIENT_CERT_POLICY: Record<
  ClientAuthType,
  { readonly requestCert: boolean; readonly rejectUnauthorized: boolean; readonly accept: (socket: TLSSocket) => boolean }
> = {
  NoClientCert: { requestCert: false, rejectUnauthorized: false, accept: () => true },
  RequestClientCert: { requestCert: true, rejectUnauthorized: false, accept: () => true },
  RequireAnyClientCert: { requestCert: true, rejectUnauthorized: false, accept: (socket) => presented(socket) },
  VerifyClientCertIfGiven: { requestCert: true, rejectUnauthorized: false, accept: (socket) => !presented(socket) || socket.authorized },
  RequireAndVerifyClientCert: { requestCert: true, rejectUnauthorized: true, accept: (socket) => presented(socket) && socket.authorized },
};

const presented = (socket: TLSSocket): boolean => socket.getPeerX509Certificate() !== undefined;

const secureContextOptions = (tls: WebTlsConfig) => ({
  cert: tls.cert,
  key: tls.key,
  ca: tls.clientCa,
  minVersion: tls.minVersion,
  maxVersion: tls.maxVersion,
});

/**
 * tls.Server reads requestCert and rejectUnauthorized for every new connection, so setting them
 * (with setSecureContext for the certificates) applies a reloaded policy to the next handshakes.
 * They are plain fields of the server, not in @types/node.
 */
export function applyTls(server: https.Server, tls: WebTlsConfig): void {
  const { requestCert, rejectUnauthorized } = CLIENT_CERT_POLICY[tls.clientAuth];
  server.setSecureContext(secureContextOptions(tls));
  Object.assign(server, { requestCert, rejectUnauthorized });
}

/** The options of an HTTPS server with this TLS configuration and its client-certificate policy. */
export function tlsServerOptions(tls: WebTlsConfig): https.ServerOptions {
  const { requestCert, rejectUnauthorized } = CLIENT_CERT_POLICY[tls.clientAuth];
  return { ...secureContextOptions(tls), requestCert, rejectUnauthorized };
}

/**
 * Drops, once its handshake is done, a connection the policy in force does not accept. Runs
 * before the HTTP layer sees the connection; the policy is the one in force now, which is also
 * correct for a session resumed from before a reload.
 */
export function enforceClientCertPolicy(server: https.Server, current: () => WebConfig): void {
  server.prependListener('secureConnection', (socket: TLSSocket) => {
    const policy = current().tls?.clientAuth ?? 'NoClientCert';
    if (!CLIENT_CERT_POLICY[policy].accept(socket)) socket.destroy();
  });
}
