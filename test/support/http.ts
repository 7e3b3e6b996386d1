/** Raw HTTP against a real listening server: byte-exact bodies (gzip) that supertest would re-encode. */
import { request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';

export interface RawResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

export async function listenOnFreePort(app: Express): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = app.listen(0, '127.0.0.1');
    server.once('listening', () => resolve(server));
    server.once('error', reject);
  });
}

export function rawPost(server: Server, path: string, body: Buffer, headers: Record<string, string>): Promise<RawResponse> {
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, path, method: 'POST', headers: { ...headers, 'Content-Length': String(body.length) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

export interface OpenPost {
  /** The answer, which may come before the body is finished. */
  readonly response: Promise<RawResponse>;
  write(chunk: Buffer): void;
  end(): void;
  /** Drops the connection (an attacker walking away). */
  destroy(): void;
}

/**
 * A POST whose body is written by the test and may never finish (no Content-Length: chunked),
 * to see what the server does before the end of a body it must not wait for.
 */
export function openPost(server: Server, path: string, headers: Record<string, string>): OpenPost {
  const { port } = server.address() as AddressInfo;
  const req = httpRequest({ host: '127.0.0.1', port, path, method: 'POST', headers, agent: false });
  const response = new Promise<RawResponse>((resolve, reject) => {
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
  response.catch(() => undefined);
  return {
    response,
    write: (chunk) => void req.write(chunk),
    end: () => void req.end(),
    destroy: () => void req.destroy(),
  };
}
