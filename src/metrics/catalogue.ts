/**
 * The listeners' value types, as src/net/ imports them. The catalogue itself is gathered by the
 * composition root (src/catalogue.ts) from the declarations each component exports; the
 * listeners' families are declared in ./connectionFamilies.ts.
 */
import type { CONNECTION_VALUES } from './connectionFamilies.js';

export type ValueOf<S extends keyof typeof CONNECTION_VALUES> = (typeof CONNECTION_VALUES)[S][number];
