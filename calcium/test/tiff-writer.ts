/**
 * A small TIFF writer for tests: classic or BigTIFF, either byte order, every sample type the
 * reader supports, strips or tiles, uncompressed, PackBits or LZW (± predictor), and the
 * descriptions microscopes write. Each page's directory comes first, then its data, as ScanImage
 * does. Pure (builds bytes in memory).
 */

import type { SampleType } from '../src/tiff/samples.ts';

type Numbers = ArrayLike<number>;

/** What to write. Pages hold samples x fastest (interleaved when samplesPerPixel > 1). */
export interface WriteTiffOptions {
  width: number;
  height: number;
  pages: Numbers[];
  sampleType: SampleType;
  bigTiff?: boolean;
  /** Default true ("II"). */
  littleEndian?: boolean;
  /** ImageDescription of the first page. */
  description?: string;
  /** Software tag of the first page. */
  software?: string;
  compression?: 'none' | 'packbits' | 'lzw' | 'deflate';
  /** Compresses for compression 'deflate' (zlib format), e.g. node:zlib's deflateSync. */
  deflate?: (bytes: Uint8Array) => Uint8Array;
  /** 2: horizontal differencing (integers), 3: floating point. */
  predictor?: 1 | 2 | 3;
  /** Default: the whole page in one strip. */
  rowsPerStrip?: number;
  tile?: { width: number; height: number };
  samplesPerPixel?: number;
  /** 2 writes each sample's plane separately. */
  planar?: 1 | 2;
  /** Per page: a different size (the page's data must match it). */
  pageSizes?: ({ width: number; height: number } | undefined)[];
  /** Per page: NewSubfileType (1 marks a reduced-resolution page). */
  newSubfileType?: number[];
  /** Leave out StripByteCounts (allowed for uncompressed data by old writers). */
  omitByteCounts?: boolean;
  /** Bytes between the header and the first directory (ScanImage 2016+ puts its settings there). */
  afterHeader?: Uint8Array;
}

/** Where things landed in a written file, for tests that damage it on purpose. */
export interface WrittenTiff {
  bytes: Uint8Array;
  /** File offset of each page's directory. */
  ifdOffsets: number[];
  /** File offset and length of each page's strips or tiles. */
  chunks: { offset: number; length: number }[][];
}

const BYTES: Record<SampleType, number> = { uint8: 1, int8: 1, uint16: 2, int16: 2, uint32: 4, int32: 4, float32: 4, float64: 8 };
const FORMAT: Record<SampleType, number> = { uint8: 1, int8: 2, uint16: 1, int16: 2, uint32: 1, int32: 2, float32: 3, float64: 3 };

/** Writes a multi-page TIFF and returns its bytes. */
export function writeTiff(o: WriteTiffOptions): Uint8Array {
  return writeTiffDetailed(o).bytes;
}

interface Entry {
  tag: number;
  type: number;
  values: number[] | Uint8Array;
}

/** Writes a multi-page TIFF and says where its directories and strips are. */
export function writeTiffDetailed(o: WriteTiffOptions): WrittenTiff {
  const little = o.littleEndian ?? true;
  const big = o.bigTiff ?? false;
  const spp = o.samplesPerPixel ?? 1;
  const planar = spp > 1 ? (o.planar ?? 1) : 1;
  const bps = BYTES[o.sampleType];
  const out = new Growable();
  // Header.
  out.bytes(little ? [0x49, 0x49] : [0x4d, 0x4d]);
  out.uint(big ? 43 : 42, 2, little);
  let nextPointer: number;
  if (big) {
    out.uint(8, 2, little);
    out.uint(0, 2, little);
    nextPointer = out.length;
    out.uint(0, 8, little);
  } else {
    nextPointer = out.length;
    out.uint(0, 4, little);
  }
  if (o.afterHeader) out.bytes(o.afterHeader);
  const ifdOffsets: number[] = [];
  const chunks: { offset: number; length: number }[][] = [];
  o.pages.forEach((data, p) => {
    const width = o.pageSizes?.[p]?.width ?? o.width;
    const height = o.pageSizes?.[p]?.height ?? o.height;
    const encoded = encodeChunks(o, data, width, height, spp, planar, little);
    const entries: Entry[] = [];
    const add = (tag: number, type: number, values: number[] | Uint8Array) => entries.push({ tag, type, values });
    const short = (v: number) => (v < 65536 ? 3 : 4);
    if (o.newSubfileType?.[p] !== undefined) add(254, 4, [o.newSubfileType[p]!]);
    add(256, short(width), [width]);
    add(257, short(height), [height]);
    add(258, 3, new Array(spp).fill(bps * 8));
    add(259, 3, [{ none: 1, packbits: 32773, lzw: 5, deflate: 8 }[o.compression ?? 'none']]);
    add(262, 3, [spp >= 3 ? 2 : 1]);
    if (p === 0 && o.description !== undefined) add(270, 2, text(o.description));
    const offsetType = big ? 16 : 4;
    if (!o.tile) add(273, offsetType, new Array(encoded.length).fill(0));
    add(277, 3, [spp]);
    if (!o.tile) add(278, 4, [o.rowsPerStrip ?? height]);
    if (!o.tile && !o.omitByteCounts) add(279, offsetType, encoded.map((c) => c.length));
    if (spp > 1) add(284, 3, [planar]);
    if (p === 0 && o.software !== undefined) add(305, 2, text(o.software));
    if (o.predictor !== undefined && o.predictor !== 1) add(317, 3, [o.predictor]);
    if (o.tile) {
      add(322, short(o.tile.width), [o.tile.width]);
      add(323, short(o.tile.height), [o.tile.height]);
      add(324, offsetType, new Array(encoded.length).fill(0));
      add(325, offsetType, encoded.map((c) => c.length));
    }
    add(339, 3, new Array(spp).fill(FORMAT[o.sampleType]));
    entries.sort((a, b) => a.tag - b.tag);

    // Lay out: directory, values that do not fit in their entries, then the pixel data.
    out.align(2);
    const ifdAt = out.length;
    ifdOffsets.push(ifdAt);
    out.patch(nextPointer, ifdAt, big ? 8 : 4, little);
    const entrySize = big ? 20 : 12;
    const inline = big ? 8 : 4;
    const ifdSize = (big ? 8 : 2) + entries.length * entrySize + (big ? 8 : 4);
    let extAt = ifdAt + ifdSize;
    const extPos = entries.map((e) => {
      const size = e.values.length * typeBytes(e.type);
      if (size <= inline) return -1;
      extAt += extAt % 2;
      const at = extAt;
      extAt += size;
      return at;
    });
    let dataAt = extAt + (extAt % 2);
    const offsets = encoded.map((c) => {
      const at = dataAt;
      dataAt += c.length;
      return at;
    });
    chunks.push(offsets.map((offset, k) => ({ offset, length: encoded[k]!.length })));
    for (const e of entries) if (e.tag === 273 || e.tag === 324) e.values = offsets;

    out.uint(entries.length, big ? 8 : 2, little);
    entries.forEach((e, k) => {
      out.uint(e.tag, 2, little);
      out.uint(e.type, 2, little);
      out.uint(e.values.length, big ? 8 : 4, little);
      if (extPos[k] === -1) {
        const start = out.length;
        writeValues(out, e, little);
        out.zeros(inline - (out.length - start));
      } else {
        out.uint(extPos[k]!, inline, little);
      }
    });
    nextPointer = out.length;
    out.uint(0, big ? 8 : 4, little);
    entries.forEach((e, k) => {
      if (extPos[k] === -1) return;
      out.zeros(extPos[k]! - out.length);
      writeValues(out, e, little);
    });
    out.zeros(offsets[0]! - out.length);
    for (const c of encoded) out.bytes(c);
  });
  return { bytes: out.result(), ifdOffsets, chunks };
}

function text(s: string): Uint8Array {
  const b = new TextEncoder().encode(s);
  const z = new Uint8Array(b.length + 1);
  z.set(b);
  return z;
}

function typeBytes(type: number): number {
  return ({ 1: 1, 2: 1, 3: 2, 4: 4, 16: 8 } as Record<number, number>)[type]!;
}

function writeValues(out: Growable, e: Entry, little: boolean): void {
  if (e.values instanceof Uint8Array) out.bytes(e.values);
  else for (const v of e.values) out.uint(v, typeBytes(e.type), little);
}

/** The page's strips or tiles: samples in the file's byte order, predicted and compressed. */
function encodeChunks(o: WriteTiffOptions, data: Numbers, width: number, height: number, spp: number, planar: number, little: boolean): Uint8Array[] {
  if (data.length !== width * height * spp) throw new Error(`page data has ${data.length} samples, expected ${width * height * spp}`);
  const all = typedOf(o.sampleType, data.length);
  all.set(data);
  // The planes to write, each with cs samples per pixel.
  const planes: { cs: number; samples: Typed }[] = [];
  if (planar === 2) {
    for (let s = 0; s < spp; s++) {
      const plane = typedOf(o.sampleType, width * height);
      for (let i = 0; i < plane.length; i++) plane[i] = all[i * spp + s]!;
      planes.push({ cs: 1, samples: plane });
    }
  } else {
    planes.push({ cs: spp, samples: all });
  }
  const result: Uint8Array[] = [];
  for (const { cs, samples } of planes) {
    const rects: { x0: number; y0: number; w: number; h: number }[] = [];
    if (o.tile) {
      for (let y = 0; y < height; y += o.tile.height) {
        for (let x = 0; x < width; x += o.tile.width) rects.push({ x0: x, y0: y, w: o.tile.width, h: o.tile.height });
      }
    } else {
      const rps = o.rowsPerStrip ?? height;
      for (let y = 0; y < height; y += rps) rects.push({ x0: 0, y0: y, w: width, h: Math.min(rps, height - y) });
    }
    for (const r of rects) {
      // The chunk's samples, tiles padded with zeros past the image.
      const rowLength = r.w * cs;
      const chunk = typedOf(o.sampleType, rowLength * r.h);
      for (let y = 0; y < r.h && r.y0 + y < height; y++) {
        const from = ((r.y0 + y) * width + r.x0) * cs;
        chunk.set(samples.subarray(from, from + Math.min(r.w, width - r.x0) * cs), y * rowLength);
      }
      if (o.predictor === 2) {
        for (let y = 0; y < r.h; y++) {
          for (let i = rowLength - 1; i >= cs; i--) chunk[y * rowLength + i] = chunk[y * rowLength + i]! - chunk[y * rowLength + i - cs]!;
        }
      }
      const raw = o.predictor === 3 ? floatPredict(chunk, o.sampleType, rowLength, cs) : fileBytes(chunk, little);
      result.push(compress(raw, o));
    }
  }
  return result;
}

type Typed = ReturnType<typeof typedOf>;

function typedOf(t: SampleType, n: number) {
  return new ({ uint8: Uint8Array, int8: Int8Array, uint16: Uint16Array, int16: Int16Array, uint32: Uint32Array, int32: Int32Array, float32: Float32Array, float64: Float64Array })[t](n);
}

const HOST_LITTLE = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** The samples' bytes in the file's byte order. */
function fileBytes(a: Typed, little: boolean): Uint8Array {
  const b = new Uint8Array(a.buffer.slice(a.byteOffset, a.byteOffset + a.byteLength));
  const size = a.BYTES_PER_ELEMENT;
  if (size > 1 && little !== HOST_LITTLE) {
    for (let i = 0; i < b.length; i += size) b.subarray(i, i + size).reverse();
  }
  return b;
}

/** libtiff's floating-point predictor, row by row: big-endian byte planes, then byte differences with stride cs. */
function floatPredict(chunk: Typed, t: SampleType, rowLength: number, cs: number): Uint8Array {
  const size = BYTES[t];
  const be = fileBytes(chunk, false);
  const out = new Uint8Array(be.length);
  const rowBytes = rowLength * size;
  for (let r = 0; r * rowBytes < be.length; r++) {
    const row = out.subarray(r * rowBytes, (r + 1) * rowBytes);
    for (let k = 0; k < rowLength; k++) for (let b = 0; b < size; b++) row[b * rowLength + k] = be[r * rowBytes + k * size + b]!;
    for (let i = row.length - 1; i >= cs; i--) row[i] = (row[i]! - row[i - cs]!) & 0xff;
  }
  return out;
}

function compress(raw: Uint8Array, o: WriteTiffOptions): Uint8Array {
  switch (o.compression ?? 'none') {
    case 'none': return raw;
    case 'packbits': return packBits(raw);
    case 'lzw': return lzwEncode(raw);
    case 'deflate': {
      if (!o.deflate) throw new Error("compression 'deflate' needs the deflate option");
      return o.deflate(raw);
    }
  }
}

/** PackBits: runs of 3+ equal bytes as repeats, the rest as literals of up to 128 bytes. */
export function packBits(src: Uint8Array): Uint8Array {
  const out: number[] = [];
  let i = 0;
  while (i < src.length) {
    let run = 1;
    while (i + run < src.length && run < 128 && src[i + run] === src[i]) run++;
    if (run >= 3) {
      out.push(257 - run, src[i]!);
      i += run;
      continue;
    }
    const start = i;
    while (i < src.length && i - start < 128) {
      if (i + 2 < src.length && src[i] === src[i + 1] && src[i] === src[i + 2]) break;
      i++;
    }
    out.push(i - start - 1, ...src.subarray(start, i));
  }
  return Uint8Array.from(out);
}

/** TIFF LZW as libtiff writes it: MSB-first codes, a clear code first, early code-width change, EOI last. */
export function lzwEncode(src: Uint8Array): Uint8Array {
  const bits = new BitWriter();
  let width = 9;
  let next = 258;
  let dict = new Map<number, number>();
  bits.put(256, width);
  if (src.length === 0) {
    bits.put(257, width);
    return bits.result();
  }
  let w = src[0]!;
  const grow = () => {
    next++;
    if (next === 4094) {
      bits.put(256, width);
      dict = new Map();
      next = 258;
      width = 9;
    } else if (next > (1 << width) - 1 && width < 12) {
      width++;
    }
  };
  for (let i = 1; i < src.length; i++) {
    const c = src[i]!;
    const key = w * 256 + c;
    const hit = dict.get(key);
    if (hit !== undefined) {
      w = hit;
      continue;
    }
    bits.put(w, width);
    dict.set(key, next);
    grow();
    w = c;
  }
  bits.put(w, width);
  grow();
  bits.put(257, width);
  return bits.result();
}

class BitWriter {
  private out: number[] = [];
  private acc = 0;
  private n = 0;
  put(code: number, width: number): void {
    this.acc = (this.acc << width) | code;
    this.n += width;
    while (this.n >= 8) {
      this.n -= 8;
      this.out.push((this.acc >>> this.n) & 0xff);
    }
    this.acc &= (1 << this.n) - 1;
  }
  result(): Uint8Array {
    if (this.n > 0) this.out.push((this.acc << (8 - this.n)) & 0xff);
    return Uint8Array.from(this.out);
  }
}

class Growable {
  private buf = new Uint8Array(1024);
  private dv = new DataView(this.buf.buffer);
  length = 0;
  private ensure(n: number): void {
    if (this.length + n <= this.buf.length) return;
    const b = new Uint8Array(Math.max(this.buf.length * 2, this.length + n));
    b.set(this.buf.subarray(0, this.length));
    this.buf = b;
    this.dv = new DataView(b.buffer);
  }
  bytes(b: ArrayLike<number>): void {
    this.ensure(b.length);
    this.buf.set(b, this.length);
    this.length += b.length;
  }
  zeros(n: number): void {
    if (n < 0) throw new Error('writer layout overlap');
    this.ensure(n);
    this.length += n;
  }
  align(n: number): void {
    this.zeros((n - (this.length % n)) % n);
  }
  uint(v: number, size: number, little: boolean): void {
    this.ensure(size);
    this.put(this.length, v, size, little);
    this.length += size;
  }
  patch(at: number, v: number, size: number, little: boolean): void {
    this.put(at, v, size, little);
  }
  private put(at: number, v: number, size: number, little: boolean): void {
    const dv = this.dv;
    if (size === 1) dv.setUint8(at, v);
    else if (size === 2) dv.setUint16(at, v, little);
    else if (size === 4) dv.setUint32(at, v, little);
    else dv.setBigUint64(at, BigInt(v), little);
  }
  result(): Uint8Array {
    return this.buf.slice(0, this.length);
  }
}
