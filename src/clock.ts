/**
 * Time as the sidecar sees it: epoch seconds from an injected function, so TTLs, liveness and
 * timestamps are testable without waiting.
 */
export type Clock = () => number;

export const systemClock: Clock = () => Date.now() / 1000;
