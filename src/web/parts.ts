/**
 * A render's parts (strings and bytes) encoded into Buffers, each part whole in one of them, and
 * never one string of the joined text: strings that large live in V8's large-object space until
 * a full collection, and a crowd of scrapes rendering every slot would pile them up.
 */
/** Parts are written into Buffers of this size: few allocations, no one giant Buffer. */
export const CHUNK_BYTES = 1024 * 1024;

export interface RenderedBody {
  /** Whose concatenation is the whole answer body. */
  readonly chunks: readonly Buffer[];
  readonly bytes: number;
}

const byteLengthOf = (part: string | Uint8Array): number => (typeof part === 'string' ? Buffer.byteLength(part, 'utf8') : part.length);

/**
 * Encodes parts (strings as UTF-8, bytes as they are) into Buffers, each part whole in one of
 * them, and yields each Buffer's filled span once the next part does not fit in it, the last at
 * the end. `bufferFor(bytes)` gives the Buffer to fill next, at least `bytes` long (the part that
 * did not fit). Each yielded span is encoded only after the consumer asked for the next one, so
 * a consumer that is done with a span before it asks again may be given the same Buffer each
 * time. No string of the joined text is ever made: strings that large live in V8's large-object
 * space until a full collection, and a crowd of scrapes rendering every slot would pile them up.
 */
export function* packParts(parts: readonly (string | Uint8Array)[], bufferFor: (bytes: number) => Buffer): Generator<Buffer, void, undefined> {
  let buffer: Buffer | undefined;
  let used = 0;
  for (const part of parts) {
    const bytes = byteLengthOf(part);
    if (buffer === undefined || used + bytes > buffer.length) {
      if (buffer !== undefined && used > 0) yield buffer.subarray(0, used);
      buffer = bufferFor(bytes);
      used = 0;
    }
    if (typeof part === 'string') used += buffer.write(part, used, 'utf8');
    else {
      buffer.set(part, used);
      used += bytes;
    }
  }
  if (buffer !== undefined && used > 0) yield buffer.subarray(0, used);
}

/** Fewest bytes of a Buffer toChunks asks for once its estimate of the body is spent (characters beyond ASCII). */
const MIN_CHUNK_BYTES = 16 * 1024;

/**
 * At least as many bytes as the parts encode to when every string is ASCII, as exposition text
 * nearly always is: a string's length counts UTF-16 code units, each one UTF-8 byte or more.
 */
export function estimatedBytes(parts: readonly (string | Uint8Array)[]): number {
  let bytes = 0;
  for (const part of parts) bytes += part.length;
  return bytes;
}

/**
 * The parts in Buffers of their own: few allocations, no one giant Buffer. Each is CHUNK_BYTES or
 * what is left of the body if less (one part's size when that is larger), so a small exposition
 * takes a Buffer its own size: a whole CHUNK_BYTES each would be memory outside V8's heap that
 * stays allocated, every scrape, until a garbage collection that an idle sidecar may not run.
 */
export function toChunks(parts: readonly (string | Uint8Array)[]): RenderedBody {
  let left = estimatedBytes(parts);
  const chunks: Buffer[] = [];
  const bufferFor = (bytes: number) => Buffer.allocUnsafe(Math.max(bytes, left > 0 ? Math.min(CHUNK_BYTES, left) : MIN_CHUNK_BYTES));
  for (const chunk of packParts(parts, bufferFor)) {
    chunks.push(chunk);
    left -= chunk.length;
  }
  return { chunks, bytes: chunks.reduce((total, each) => total + each.length, 0) };
}

