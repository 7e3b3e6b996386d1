/**
 * The YAML parser, loaded on first use: a sidecar started without a config file or a web config
 * file never parses YAML, so it need not hold the library in memory. Synchronous
 * (`require` of the package's CommonJS build), as the config readers are.
 */
import { createRequire } from 'node:module';

type Yaml = typeof import('yaml');

let loaded: Yaml | undefined;

export function yaml(): Yaml {
  loaded ??= createRequire(import.meta.url)('yaml') as Yaml;
  return loaded;
}
