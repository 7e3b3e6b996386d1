/**
 * Basic-auth verification (src/web/credentials.ts): header parsing, the decoy hash, and the
 * memory of verifications. Over real HTTP, with the counters, in server.test.ts.
 */
import bcrypt from 'bcryptjs';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { CredentialChecker, decoyHash, parseBasicAuth } from '../../src/web/credentials.js';

const PASSWORD = 'scrape-me';
let fastHash: string;
beforeAll(async () => {
  fastHash = await bcrypt.hash(PASSWORD, 4);
});

describe('CredentialChecker', () => {
  it('parses Basic credentials like Go (case-insensitive scheme, first colon splits, strict base64)', () => {
    const basic = (text: string) => `Basic ${Buffer.from(text).toString('base64')}`;
    expect(parseBasicAuth(basic('alice:pa:ss'))).toEqual({ user: 'alice', password: 'pa:ss' });
    expect(parseBasicAuth(`bAsIc ${Buffer.from('a:b').toString('base64')}`)).toEqual({ user: 'a', password: 'b' });
    expect(parseBasicAuth(basic(':'))).toEqual({ user: '', password: '' });
    expect(parseBasicAuth(basic('no-colon'))).toBeUndefined();
    expect(parseBasicAuth('Basic YWxpY2U6cHc')).toBeUndefined(); // unpadded
    expect(parseBasicAuth(undefined)).toBeUndefined();
  });

  it('makes the decoy as slow as the slowest configured hash', () => {
    const users = (...costs: number[]) => new Map(costs.map((cost, index) => [`u${index}`, `$2y$${String(cost).padStart(2, '0')}$${'a'.repeat(53)}`]));
    expect(bcrypt.getRounds(decoyHash(users(4)))).toBe(4);
    expect(bcrypt.getRounds(decoyHash(users(10, 12)))).toBe(12);
  });

  it('forgets verifications on clear() (a reload)', async () => {
    const compare = vi.fn(async () => true);
    const checker = new CredentialChecker({ compare });
    const users = new Map([['alice', fastHash]]);
    const header = `Basic ${Buffer.from(`alice:${PASSWORD}`).toString('base64')}`;
    await checker.check(users, header);
    await checker.check(users, header);
    checker.clear();
    await checker.check(users, header);
    expect(compare).toHaveBeenCalledTimes(2);
  });
});

describe('CredentialChecker without an injected compare', () => {
  it('verifies with real bcrypt in its worker thread, and remembers the success', async () => {
    const checker = new CredentialChecker();
    try {
      const users = new Map([['alice', fastHash]]);
      const basic = (password: string) => `Basic ${Buffer.from(`alice:${password}`).toString('base64')}`;
      expect(await checker.verify(users, basic(PASSWORD))).toBe('ok');
      expect(await checker.verify(users, basic('wrong'))).toBe('wrong');
      expect(await checker.verify(users, basic('wrong'))).toBe('repeated');
      expect(await checker.verify(users, undefined)).toBe('wrong');
    } finally {
      await checker.close();
    }
  });
});
