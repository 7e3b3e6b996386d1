/**
 * Which session databases to read and the profile each belongs to: Hermes keeps one state.db in
 * its home (the default profile) and one per profile under profiles/<name>/.
 */
import { existsSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join } from 'node:path';

export const DEFAULT_PROFILE = 'default';

export interface StateDatabase {
  readonly path: string;
  readonly profile: string;
}

/** The profile of a state.db path: <name> under a `profiles` directory, else the default one. */
export function profileOf(path: string): string {
  const parent = dirname(path);
  return basename(dirname(parent)) === 'profiles' ? basename(parent) : DEFAULT_PROFILE;
}

export function hermesHomeOf(env: NodeJS.ProcessEnv, explicit: string | undefined): string {
  return explicit ?? (env.HERMES_HOME !== undefined && env.HERMES_HOME !== '' ? env.HERMES_HOME : join(homedir(), '.hermes'));
}

/** The home's state.db and every profile's, those that exist, profiles in name order. */
export function defaultDatabases(home: string): StateDatabase[] {
  const found: StateDatabase[] = [];
  const main = join(home, 'state.db');
  if (existsSync(main)) found.push({ path: main, profile: DEFAULT_PROFILE });
  const profilesDir = join(home, 'profiles');
  let names: string[] = [];
  try {
    names = readdirSync(profilesDir, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
  } catch {
    names = [];
  }
  for (const name of names.sort()) {
    const path = join(profilesDir, name, 'state.db');
    if (existsSync(path)) found.push({ path, profile: name });
  }
  return found;
}

export function chosenDatabases(stateDbs: readonly string[], home: string): StateDatabase[] {
  return stateDbs.length > 0 ? stateDbs.map((path) => ({ path, profile: profileOf(path) })) : defaultDatabases(home);
}
