// A document's state as several Yjs updates in one byte string: how a large workspace's snapshot
// is stored (server/src/store/split-state.mjs cuts it) and sent to a browser that opens it, so that
// both can apply it a part at a time. Plain JavaScript so the server's worker threads load it
// without a TypeScript loader; types are in state-parts.d.mts. Effects: none (pure).
//
// Layout: MAGIC, then lib0 var-uints: the number of parts, then each part as a var-uint length
// and its bytes. MAGIC reads as a Yjs v1 update that claims 2^32 - 1 clients, which no real update
// (nor any that fits in memory) does, so bytes that start with it are never taken for one update.
import * as encoding from 'lib0/encoding';
import * as decoding from 'lib0/decoding';

const MAGIC = new Uint8Array([0xff, 0xff, 0xff, 0xff, 0x0f, 0x50, 0x58, 0x50]); // …, 'PXP'

/** True when `bytes` hold several parts (packStateParts), false for one plain update. */
export function isStateParts(bytes) {
  if (bytes.byteLength < MAGIC.length) return false;
  for (let i = 0; i < MAGIC.length; i++) if (bytes[i] !== MAGIC[i]) return false;
  return true;
}

/** `parts` in one byte string. */
export function packStateParts(parts) {
  const enc = encoding.createEncoder();
  encoding.writeUint8Array(enc, MAGIC);
  encoding.writeVarUint(enc, parts.length);
  for (const p of parts) encoding.writeVarUint8Array(enc, p);
  return encoding.toUint8Array(enc);
}

/**
 * The updates in `bytes`: its parts (views into it, not copies) when it holds several, else
 * `[bytes]`. Throws on a truncated or malformed byte string.
 */
export function unpackStateParts(bytes) {
  if (!isStateParts(bytes)) return [bytes];
  const dec = decoding.createDecoder(bytes);
  decoding.readUint8Array(dec, MAGIC.length);
  const n = decoding.readVarUint(dec);
  if (n > bytes.byteLength) throw new Error('malformed state parts: more parts than bytes');
  const parts = [];
  for (let i = 0; i < n; i++) {
    const len = decoding.readVarUint(dec);
    // Checked here: a view past the end would not throw when `bytes` sits in a larger buffer.
    if (dec.pos + len > bytes.byteLength) throw new Error('malformed state parts: truncated');
    parts.push(decoding.readUint8Array(dec, len));
  }
  if (decoding.hasContent(dec)) throw new Error('malformed state parts: bytes after the last part');
  return parts;
}
