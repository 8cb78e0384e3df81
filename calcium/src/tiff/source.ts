/**
 * Random-access byte sources the TIFF reader reads from, so a recording never has to be held in
 * memory. Pure: `bytesSource` wraps bytes already in memory; the server wraps a file handle.
 */

/**
 * Random access to a file's bytes. `read(offset, length)` resolves to `length` bytes starting at
 * `offset` (fewer only where the file ends); callers treat the bytes as read-only.
 */
export interface ByteSource {
  /** The file's length in bytes. */
  size: number;
  read(offset: number, length: number): Promise<Uint8Array>;
}

/** A ByteSource over bytes in memory (reads return views into `buf`, not copies). */
export function bytesSource(buf: Uint8Array): ByteSource {
  return {
    size: buf.length,
    async read(offset, length) {
      const start = Math.max(0, Math.min(offset, buf.length));
      return buf.subarray(start, Math.min(buf.length, start + Math.max(0, length)));
    },
  };
}
