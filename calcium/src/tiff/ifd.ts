/**
 * The TIFF container: the header (byte order, classic or BigTIFF) and image file directories
 * (IFDs), the tag lists that describe each page. Pure apart from reading its ByteSource.
 */

import type { ByteSource } from './source.ts';
import { TiffError } from './tiff-error.ts';

/** What the 8- or 16-byte header says. */
export interface TiffHeader {
  littleEndian: boolean;
  bigTiff: boolean;
  /** Bytes the header occupies (8 classic, 16 BigTIFF). */
  headerSize: number;
  firstIfd: number;
}

/** One tag of an IFD: its field type, value count and where its values lie. */
export interface IfdEntry {
  tag: number;
  type: number;
  count: number;
  /** File offset of the values (inside the entry when they fit there). */
  pos: number;
  /** Bytes the values occupy. */
  bytes: number;
}

/** One directory: its entries by tag, the offset of the next one (0 at the end), and the bytes read. */
export interface Ifd {
  offset: number;
  entries: Map<number, IfdEntry>;
  next: number;
  /** Entry count, a good guess for the size of the next directory. */
  count: number;
  /** The directory's bytes as read (sometimes followed by values that lie right after it). */
  buf: Uint8Array;
  view: DataView;
}

// Field types: BYTE ASCII SHORT LONG RATIONAL SBYTE UNDEFINED SSHORT SLONG SRATIONAL FLOAT DOUBLE IFD
// and BigTIFF's LONG8 SLONG8 IFD8.
const TYPE_SIZE: Record<number, number> = { 1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 6: 1, 7: 1, 8: 2, 9: 4, 10: 8, 11: 4, 12: 8, 13: 4, 16: 8, 17: 8, 18: 8 };

/** Bytes per value of a TIFF field type (0 for types this reader does not know). */
export function typeSize(type: number): number {
  return TYPE_SIZE[type] ?? 0;
}

/** A directory claiming more entries than this is garbage (real ones have a few dozen). */
const MAX_ENTRIES = 4096;

/** Reads exactly `length` bytes or throws a TiffError saying the file ends inside `what`. */
export async function readExact(src: ByteSource, offset: number, length: number, what: string): Promise<Uint8Array> {
  if (offset + length > src.size) throw new TiffError(`the file ends inside ${what} (truncated?)`);
  const b = await src.read(offset, length);
  if (b.length < length) throw new TiffError(`the file ends inside ${what} (truncated?)`);
  return b;
}

function view(b: Uint8Array): DataView {
  return new DataView(b.buffer, b.byteOffset, b.byteLength);
}

function u64(dv: DataView, at: number, little: boolean, what: string): number {
  const v = dv.getBigUint64(at, little);
  if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new TiffError(`${what}: an impossible offset or size (the file is corrupt)`);
  return Number(v);
}

function hex(b: Uint8Array): string {
  return Array.from(b.subarray(0, 4), (x) => x.toString(16).padStart(2, '0')).join(' ');
}

/** Reads and checks the header. */
export async function readHeader(src: ByteSource): Promise<TiffHeader> {
  if (src.size < 8) throw new TiffError(`this is not a TIFF file: it is only ${src.size} bytes long`);
  const head = await readExact(src, 0, Math.min(16, src.size), 'the file header');
  const order = String.fromCharCode(head[0]!, head[1]!);
  if (order !== 'II' && order !== 'MM') {
    throw new TiffError(`this is not a TIFF file: a TIFF starts with "II" or "MM", this one with the bytes ${hex(head)}`);
  }
  const little = order === 'II';
  const dv = view(head);
  const version = dv.getUint16(2, little);
  if (version === 42) {
    const firstIfd = dv.getUint32(4, little);
    return { littleEndian: little, bigTiff: false, headerSize: 8, firstIfd };
  }
  if (version === 43) {
    if (head.length < 16) throw new TiffError('the file ends inside its BigTIFF header (truncated?)');
    if (dv.getUint16(4, little) !== 8 || dv.getUint16(6, little) !== 0) {
      throw new TiffError('this BigTIFF header is corrupt (its offset size is not 8)');
    }
    return { littleEndian: little, bigTiff: true, headerSize: 16, firstIfd: u64(dv, 8, little, 'the header') };
  }
  throw new TiffError(`this is not a TIFF file: its header has version ${version} where TIFF has 42 and BigTIFF 43`);
}

/**
 * Reads the directory at `offset` (checked to lie inside the file) as page `page` (1-based, for
 * messages). `guessEntries` (the previous directory's count; 0 for none) sizes the first read so
 * a directory usually costs one read and reads nothing past its end.
 */
export async function readIfd(src: ByteSource, h: TiffHeader, offset: number, guessEntries: number, page: number): Promise<Ifd> {
  const what = `page ${page}'s directory`;
  const countSize = h.bigTiff ? 8 : 2;
  const entrySize = h.bigTiff ? 20 : 12;
  const nextSize = h.bigTiff ? 8 : 4;
  if (offset >= src.size) {
    throw new TiffError(`${what} would start at byte ${offset}, beyond the end of the ${src.size}-byte file (truncated?)`);
  }
  if (offset < h.headerSize) throw new TiffError(`${what} is said to start at byte ${offset}, inside the file header (the file is corrupt)`);
  const guess = guessEntries > 0 ? countSize + guessEntries * entrySize + nextSize : countSize;
  let buf = await src.read(offset, Math.min(guess, src.size - offset));
  if (buf.length < countSize) throw new TiffError(`the file ends inside ${what} (truncated?)`);
  let dv = view(buf);
  const count = h.bigTiff ? u64(dv, 0, h.littleEndian, what) : dv.getUint16(0, h.littleEndian);
  if (count === 0) throw new TiffError(`${what} is empty (the file is corrupt)`);
  if (count > MAX_ENTRIES) throw new TiffError(`${what} claims ${count} tags, far more than any TIFF writer uses (the file is corrupt)`);
  const total = countSize + count * entrySize + nextSize;
  if (buf.length < total) {
    buf = await readExact(src, offset, total, what);
    dv = view(buf);
  }
  const entries = new Map<number, IfdEntry>();
  const inline = h.bigTiff ? 8 : 4;
  for (let k = 0; k < count; k++) {
    const at = countSize + k * entrySize;
    const tag = dv.getUint16(at, h.littleEndian);
    const type = dv.getUint16(at + 2, h.littleEndian);
    const n = h.bigTiff ? u64(dv, at + 4, h.littleEndian, what) : dv.getUint32(at + 4, h.littleEndian);
    const valueAt = at + (h.bigTiff ? 12 : 8);
    const size = typeSize(type);
    if (size === 0) continue; // Unknown field types are to be skipped, says the specification.
    const bytes = n * size;
    const pos = bytes <= inline ? offset + valueAt : h.bigTiff ? u64(dv, valueAt, h.littleEndian, what) : dv.getUint32(valueAt, h.littleEndian);
    entries.set(tag, { tag, type, count: n, pos, bytes });
  }
  const nextAt = countSize + count * entrySize;
  const next = h.bigTiff ? u64(dv, nextAt, h.littleEndian, what) : dv.getUint32(nextAt, h.littleEndian);
  return { offset, entries, next, count, buf, view: dv };
}

/** Decodes `n` numeric values of field type `type` from `bytes`. */
export function decodeNumbers(bytes: Uint8Array, type: number, n: number, little: boolean, what: string): number[] {
  return decodeAt(view(bytes), 0, type, n, little, what);
}

function decodeAt(dv: DataView, at: number, type: number, n: number, little: boolean, what: string): number[] {
  const out = new Array<number>(n);
  const size = typeSize(type);
  for (let i = 0, p = at; i < n; i++, p += size) {
    switch (type) {
      case 1: case 2: case 7: out[i] = dv.getUint8(p); break;
      case 6: out[i] = dv.getInt8(p); break;
      case 3: out[i] = dv.getUint16(p, little); break;
      case 8: out[i] = dv.getInt16(p, little); break;
      case 4: case 13: out[i] = dv.getUint32(p, little); break;
      case 9: out[i] = dv.getInt32(p, little); break;
      case 5: out[i] = dv.getUint32(p, little) / dv.getUint32(p + 4, little); break;
      case 10: out[i] = dv.getInt32(p, little) / dv.getInt32(p + 4, little); break;
      case 11: out[i] = dv.getFloat32(p, little); break;
      case 12: out[i] = dv.getFloat64(p, little); break;
      case 16: case 18: out[i] = u64(dv, p, little, what); break;
      case 17: out[i] = Number(dv.getBigInt64(p, little)); break;
      default: throw new TiffError(`${what} has a field type (${type}) this reader cannot decode`);
    }
  }
  return out;
}

/**
 * The raw bytes of values `start … start + n − 1` of `e`, from the directory's own bytes when they
 * lie there, else read from the file (checked to lie inside it).
 */
export async function entryBytes(src: ByteSource, ifd: Ifd, e: IfdEntry, start: number, n: number, what: string): Promise<Uint8Array> {
  const size = typeSize(e.type);
  const pos = e.pos + start * size;
  const len = n * size;
  const local = pos - ifd.offset;
  if (local >= 0 && local + len <= ifd.buf.length) return ifd.buf.subarray(local, local + len);
  if (pos + len > src.size) throw new TiffError(`${what} would extend beyond the end of the file (truncated or corrupt?)`);
  return readExact(src, pos, len, what);
}

/** Values `start … start + n − 1` of `e` when they lie in the directory's own bytes (no read needed), else undefined. */
export function localNumbers(h: TiffHeader, ifd: Ifd, e: IfdEntry, start: number, n: number, what: string): number[] | undefined {
  const size = typeSize(e.type);
  const local = e.pos + start * size - ifd.offset;
  if (local < 0 || local + n * size > ifd.buf.length) return undefined;
  return decodeAt(ifd.view, local, e.type, n, h.littleEndian, what);
}

/** Values `start … start + n − 1` of `e` as numbers. */
export async function entryNumbers(src: ByteSource, h: TiffHeader, ifd: Ifd, e: IfdEntry, start: number, n: number, what: string): Promise<number[]> {
  return decodeNumbers(await entryBytes(src, ifd, e, start, n, what), e.type, n, h.littleEndian, what);
}
