/** bcrypt in a worker thread: verdicts as bcryptjs gives them, a bad hash refused, pending ones refused at close. */
import bcrypt from 'bcryptjs';
import { afterEach, describe, expect, it } from 'vitest';
import { BcryptWorker } from '../../src/web/bcryptWorker.js';

// Cost 4, the least bcrypt allows: the test checks verdicts, not the work factor.
const HASH = bcrypt.hashSync('secret', 4);

describe('BcryptWorker', () => {
  const workers: BcryptWorker[] = [];
  const worker = (): BcryptWorker => {
    const made = new BcryptWorker();
    workers.push(made);
    return made;
  };
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((made) => made.close()));
  });

  it('says whether a password matches its hash, each answer to its own question', async () => {
    const bcryptWorker = worker();
    expect(await Promise.all([bcryptWorker.compare('secret', HASH), bcryptWorker.compare('wrong', HASH), bcryptWorker.compare('secret', HASH)])).toEqual([true, false, true]);
  });

  it('refuses a hash bcrypt cannot read, without failing', async () => {
    expect(await worker().compare('secret', 'not a bcrypt hash')).toBe(false);
  });

  it('refuses what is pending when closed, and starts again on the next verification', async () => {
    const bcryptWorker = worker();
    const pending = bcryptWorker.compare('secret', HASH);
    await bcryptWorker.close();
    expect(await pending).toBe(false);
    expect(await bcryptWorker.compare('secret', HASH)).toBe(true);
  });
});
