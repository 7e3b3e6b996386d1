/**
 * The listener helpers (src/net/listener.ts) both listeners use: limits from settings, Node's
 * timeouts set on the server, binding, the bound address and closing.
 */
import http from 'node:http';
import https from 'node:https';
import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config.js';
import { boundAddress, closeNow, closeServer, createListener, DEFAULT_LIMITS, limitsFrom, listenOn } from '../../src/net/listener.js';
import { webListenerLimits } from '../../src/app.js';

describe('limitsFrom', () => {
  it('turns a listener settings into limits, giving a body its allowance after the head', () => {
    expect(limitsFrom({ maxConnections: 10, headersTimeoutSeconds: 2, writeTimeoutSeconds: 7, maxRequestsPerConnection: 3, maxRequestRate: 4, minBodyBytesPerSecond: 512 }, 11_000)).toEqual({
      maxConnections: 10,
      maxWaitingRequests: 8,
      writeTimeoutMs: 7000,
      minBodyBytesPerSecond: 512,
      maxRequestsPerConnection: 3,
      maxRequestRate: 4,
      headersTimeoutMs: 2000,
      requestTimeoutMs: 13_000,
      keepAliveTimeoutMs: 5000,
    });
  });

  it('matches DEFAULT_LIMITS with the default flags of the web listener', () => {
    expect(webListenerLimits(defaultConfig())).toEqual(DEFAULT_LIMITS);
  });
});

describe('createListener', () => {
  it("sets Node's timeouts from the limits, on HTTP and HTTPS servers", () => {
    const limits = { ...DEFAULT_LIMITS, headersTimeoutMs: 1500, requestTimeoutMs: 4000, keepAliveTimeoutMs: 2500 };
    const plain = createListener(() => undefined, { name: 'web', limits });
    expect(plain).toBeInstanceOf(http.Server);
    expect(plain).not.toBeInstanceOf(https.Server);
    expect([plain.headersTimeout, plain.requestTimeout, plain.keepAliveTimeout]).toEqual([1500, 4000, 2500]);
    const secure = createListener(() => undefined, { name: 'web', limits, tls: {} });
    expect(secure).toBeInstanceOf(https.Server);
    expect([secure.headersTimeout, secure.requestTimeout, secure.keepAliveTimeout]).toEqual([1500, 4000, 2500]);
  });
});

describe('listenOn, boundAddress, closeServer', () => {
  it('binds port 0 on loopback, reports host:port, and closes', async () => {
    const server = await listenOn(createListener((_request, response) => response.end('ok'), { name: 'ingest', limits: DEFAULT_LIMITS }), { host: '127.0.0.1', port: 0 });
    expect(boundAddress(server)).toMatch(/^127\.0\.0\.1:\d+$/);
    await closeServer(server, 100);
    expect(server.listening).toBe(false);
    // Closing what is not listening is a no-op.
    await closeNow(server);
  });

  it('brackets an IPv6 address', async () => {
    const server = await listenOn(createListener(() => undefined, { name: 'web', limits: DEFAULT_LIMITS }), { host: '::1', port: 0 }).catch(() => undefined);
    if (server === undefined) {
      process.stdout.write('IPv6 loopback unavailable here: the bracket case is not exercised\n');
      return;
    }
    expect(boundAddress(server)).toMatch(/^\[::1\]:\d+$/);
    await closeNow(server);
  });

  it('rejects when the address is taken', async () => {
    const first = await listenOn(createListener(() => undefined, { name: 'web', limits: DEFAULT_LIMITS }), { host: '127.0.0.1', port: 0 });
    const port = Number(boundAddress(first).split(':')[1]);
    await expect(listenOn(createListener(() => undefined, { name: 'web', limits: DEFAULT_LIMITS }), { host: '127.0.0.1', port })).rejects.toMatchObject({ code: 'EADDRINUSE' });
    await closeNow(first);
  });
});
