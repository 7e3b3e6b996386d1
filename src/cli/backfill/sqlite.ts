/**
 * Opening a Hermes session database read-only through better-sqlite3, an optional dependency
 * loaded only by `backfill` (so a sidecar install never compiles it).
 *
 * Safe while Hermes writes: the file is opened read-only (`readonly`, `fileMustExist`, and
 * `PRAGMA query_only` on top), so this connection never writes, never checkpoints and never
 * recovers a WAL for a writer. SQLite's WAL readers see the last committed transaction, including
 * frames still in state.db-wal; each stream is one statement, and so one read transaction: a
 * consistent snapshot of its table even while Hermes commits new rows.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { BackfillError } from './errors.js';

export type Database = BetterSqlite3.Database;
type DatabaseConstructor = typeof BetterSqlite3;

/** The one version range the backfill is tested with (package.json peerDependencies). */
export const BINDING = 'better-sqlite3@12.11.1';

export const INSTALL_HINT =
  `backfill needs the SQLite binding better-sqlite3, an optional peer dependency not installed with the sidecar: run \`npm install ${BINDING}\` ` +
  `in the project the sidecar is installed in, or \`npm install -g ${BINDING}\` beside a global install.`;

export async function loadBinding(load: () => Promise<unknown> = () => import('better-sqlite3')): Promise<DatabaseConstructor> {
  try {
    const loaded = (await load()) as { default?: DatabaseConstructor };
    if (typeof loaded.default !== 'function') throw new Error('no constructor');
    return loaded.default;
  } catch {
    throw new BackfillError('no_binding', INSTALL_HINT);
  }
}

/** Opens read-only; `label` names the database in errors (its profile, never its path or content). */
export function openReadOnly(Sqlite: DatabaseConstructor, path: string, label: string): Database {
  let db: Database | undefined;
  try {
    db = new Sqlite(path, { readonly: true, fileMustExist: true });
    db.pragma('query_only = 1');
    // A writer holding the lock briefly (a checkpoint) should not fail the read.
    db.pragma('busy_timeout = 5000');
    // Each stream sorts its table by time; SQLite's sorter spills to temporary files past the
    // page cache, so a small cache keeps the four connections per database small.
    db.pragma('cache_size = -4000');
    // Reading sqlite_master fails here, with SQLite's own code, on a file that is not a database.
    db.prepare('SELECT count(*) FROM sqlite_master').get();
    return db;
  } catch (error) {
    db?.close();
    const code = (error as { code?: unknown }).code;
    throw new BackfillError('not_readable', `The session database of ${label} cannot be read as SQLite (${typeof code === 'string' ? code : 'open failed'}).`);
  }
}
