/**
 * A streaming reader for multi-page TIFF recordings (classic and BigTIFF, either byte order) as
 * ScanImage, Bruker/Prairie, ImageJ/Fiji and Micro-Manager write them. Opening walks the chain of
 * page directories once and keeps where each page's pixel data lie (a few numbers per page, never
 * pixels); reading a page then costs a constant number of reads. Pure apart from reading its
 * ByteSource; every problem with the file is a TiffError.
 */

import { checkAborted } from '../types.ts';
import { lzwDecode, undoFloatPredictor, undoHorizontalPredictor, unpackBits } from './codecs.ts';
import { decodeNumbers, entryBytes, readExact, readHeader, readIfd, typeSize, type Ifd, type TiffHeader } from './ifd.ts';
import { imagejImageCount, recordingMetadata, type RecordingMetadata } from './metadata.ts';
import { checkCodec, chunkSizes, chunkTable, describePage, T, type Layout, type PageDesc } from './page-layout.ts';
import { allocSamples, bytesPerSample, toNative, type SampleArray, type SampleType } from './samples.ts';
import type { ByteSource } from './source.ts';
import { TiffError } from './tiff-error.ts';

export { TiffError } from './tiff-error.ts';
export type { SampleArray, SampleType } from './samples.ts';

/** Options of `openTiff`. */
export interface OpenTiffOptions {
  /**
   * Inflates zlib data, for Deflate-compressed files (compression 8 and 32946). Without it such
   * files are refused. On Node: `(b) => zlib.inflateSync(b)`.
   */
  inflate?: (bytes: Uint8Array) => Uint8Array | Promise<Uint8Array>;
  /** Refuse files with more pages than this (default 1,000,000): a guard against corrupt chains. */
  maxPages?: number;
  /** For pages with several samples per pixel (RGB): which one to read, 0-based. Such pages are refused without it. */
  sample?: number;
  /** Aborting stops the walk over the pages with an AbortError. */
  signal?: AbortSignal;
}

/** An open multi-page TIFF: every page has the same size and sample type. */
export interface TiffStack {
  readonly width: number;
  readonly height: number;
  /** Full-resolution pages (reduced-resolution thumbnails are skipped). */
  readonly pages: number;
  readonly sampleType: SampleType;
  readonly littleEndian: boolean;
  readonly bigTiff: boolean;
  /** The first page's ImageDescription. */
  readonly description?: string;
  /** The first page's Software tag (ScanImage 2016+ keeps its settings there). */
  readonly software?: string;
  /** Reduced-resolution pages skipped (e.g. thumbnails of Zeiss LSM files). */
  readonly thumbnails: number;
  readonly metadata: RecordingMetadata;
  /** Writes page `i` (0-based) converted to float32 into `out` (length width × height, x fastest). */
  readPage(i: number, out: Float32Array): Promise<void>;
  /** Page `i` (0-based) in its own sample type (x fastest). */
  readPageRaw(i: number): Promise<SampleArray>;
}

const DEFAULT_MAX_PAGES = 1_000_000;
/** Compressed strips longer than this many times their decoded size are clipped (LZW at worst grows data 1.5×). */
const MAX_EXPANSION = 2;
/**
 * No strip decompresses to more than this many times its size (Deflate at most ~1032×, LZW with
 * its table resets ~1300×, PackBits 64×): a corrupt size cannot make us allocate gigabytes.
 */
const MAX_RATIO = 1500;
/** Text tags longer than this are cut (OME-XML of huge plates). */
const MAX_TEXT = 16 * 2 ** 20;
/** Strips closer than this are read in one go. */
const MERGE_GAP = 1024;

/** Opens a TIFF recording: reads the header and every page's directory, but no pixel data. */
export async function openTiff(src: ByteSource, opts: OpenTiffOptions = {}): Promise<TiffStack> {
  const h = await readHeader(src);
  if (h.firstIfd === 0) throw new TiffError('the file contains no pages');
  const maxPages = opts.maxPages ?? DEFAULT_MAX_PAGES;

  // Per page, column-wise so a long recording costs a few dozen bytes a page: its layout, and
  // the field type and value of its chunk offsets and byte counts. With one chunk the value is the
  // offset (or count) itself, else the file position of the list (type 0: no counts, compute them).
  const layouts: Layout[] = [];
  const layoutIds = new Map<string, number>();
  const layoutOf: number[] = [];
  const offType: number[] = [];
  const offVal: number[] = [];
  const cntType: number[] = [];
  const cntVal: number[] = [];

  let first: PageDesc | undefined;
  let firstIfd: Ifd | undefined;
  let thumbnails = 0;
  const seen = new Map<number, number>();
  let guess = 0;
  for (let offset = h.firstIfd, n = 1; offset !== 0; n++) {
    if (n % 1024 === 1) checkAborted(opts.signal);
    if (n > maxPages) {
      throw new TiffError(`the file has more than ${maxPages} pages, more than this reader opens (a corrupt page chain, or raise maxPages)`);
    }
    const before = seen.get(offset);
    if (before !== undefined) {
      throw new TiffError(`page ${n}'s directory is page ${before}'s again: the chain of pages loops back on itself (the file is corrupt)`);
    }
    seen.set(offset, n);
    const ifd = await readIfd(src, h, offset, guess, n);
    guess = ifd.count;
    firstIfd ??= ifd;
    offset = ifd.next;

    const desc = await describePage(src, h, ifd, n, opts);
    if (desc === null) {
      thumbnails++;
      continue;
    }
    if (first === undefined) first = desc;
    else if (desc.width !== first.width || desc.height !== first.height || desc.sampleType !== first.sampleType || desc.samples !== first.samples) {
      throw new TiffError(
        `page ${n} is ${shape(desc)} but page 1 is ${shape(first)}; every page of a recording must have the same size and sample type`,
      );
    }
    let id = layoutIds.get(desc.layoutKey);
    // The chunk lists are checked against the file before a new layout sizes its chunks.
    const [ot, ov, ct, cv] = await chunkTable(src, h, ifd, n, id === undefined ? desc.layout : layouts[id]!, desc.samples);
    if (id === undefined) {
      checkCodec(desc.layout, desc.sampleType, n, opts);
      desc.layout.chunkBytes = chunkSizes(desc.layout, desc.width, desc.height, bytesPerSample(desc.sampleType));
      id = layouts.push(desc.layout) - 1;
      layoutIds.set(desc.layoutKey, id);
    }
    layoutOf.push(id);
    offType.push(ot);
    offVal.push(ov);
    cntType.push(ct);
    cntVal.push(cv);
  }
  if (first === undefined || firstIfd === undefined) throw new TiffError('the file contains only reduced-resolution (thumbnail) pages');

  const description = await textTag(src, firstIfd, T.ImageDescription, 'the image description');
  const software = await textTag(src, firstIfd, T.Software, 'the Software tag');
  const siHeader = software?.startsWith('SI.') ? software : await scanImageHeader(src, h);
  let pages = layoutOf.length;

  // ImageJ writes stacks over 4 GB as one directory followed by all images back to back.
  const images = imagejImageCount(description);
  if (pages === 1 && images !== undefined && images > 1) {
    const contiguous = await imagejContiguous(src, h, first, layouts[layoutOf[0]!]!, offType[0]!, offVal[0]!, images, maxPages);
    if (contiguous !== undefined) {
      const id = layouts.push(contiguous.layout) - 1;
      for (let i = 0; i < images; i++) {
        layoutOf[i] = id;
        offType[i] = 16;
        offVal[i] = contiguous.base + i * contiguous.pageBytes;
        cntType[i] = 0;
        cntVal[i] = 0;
      }
      pages = images;
    }
  }

  const metadata = recordingMetadata(description, pages, siHeader);
  const { width, height, sampleType } = first;
  const bps = bytesPerSample(sampleType);

  async function readPageRaw(i: number): Promise<SampleArray> {
    if (!Number.isInteger(i) || i < 0 || i >= pages) throw new RangeError(`page index ${i} is outside 0…${pages - 1}`);
    const L = layouts[layoutOf[i]!]!;
    const page = `page ${i + 1}`;
    const n = L.chunks;
    const kind = L.tiled ? 'tile' : 'strip';
    const offsets = n === 1 ? [offVal[i]!] : await readList(src, h, offType[i]!, offVal[i]!, n, `${page}'s ${kind} offsets`);
    const counts = cntType[i] === 0 ? L.chunkBytes : n === 1 ? [cntVal[i]!] : await readList(src, h, cntType[i]!, cntVal[i]!, n, `${page}'s ${kind} sizes`);
    const lengths = new Array<number>(n);
    for (let k = 0; k < n; k++) {
      const need = L.chunkBytes[k]!;
      const at = offsets[k]!;
      const count = counts[k]!;
      // Uncompressed chunks: read just what the pixels need. Compressed: what the file says, clipped.
      const len = L.compression === 1 ? need : Math.min(count, need * MAX_EXPANSION + 4096);
      if (at >= src.size) throw new TiffError(`${page}'s pixel data would start beyond the end of the file (truncated?)`);
      if (at + Math.min(len, count) > src.size) throw new TiffError(`the file ends inside ${page}'s pixel data (truncated?)`);
      if (count === 0) throw new TiffError(`${chunkName(L, k, n)} of ${page} is empty (the file is corrupt)`);
      if (L.compression === 1 && count < need) {
        throw new TiffError(`${chunkName(L, k, n)} of ${page} holds ${count} bytes where its pixels need ${need} (the file is corrupt)`);
      }
      if (L.compression !== 1 && count * MAX_RATIO < need) {
        throw new TiffError(`${chunkName(L, k, n)} of ${page} holds ${count} compressed bytes, too few for the ${need} bytes of its pixels (the file is corrupt)`);
      }
      if (at + len > src.size) throw new TiffError(`the file ends inside ${page}'s pixel data (truncated?)`);
      lengths[k] = len;
    }
    if (L.compression === 1 && L.predictor === 1 && !L.tiled && L.samplesInChunk === 1 && backToBack(offsets, lengths)) {
      // The common case: rows stored back to back in the file's sample type, one read.
      return toNative(await readExact(src, offsets[0]!, width * height * bps, `${page}'s pixel data`), sampleType, h.littleEndian);
    }
    const data = await readChunks(src, offsets, lengths, `${page}'s pixel data`);
    const out = allocSamples(sampleType, width * height);
    for (let k = 0; k < n; k++) {
      const where = `${chunkName(L, k, n)} of ${page}`;
      const bytes = await decompress(data[k]!, L, L.chunkBytes[k]!, where, opts);
      place(out, bytes, L, k, width, height, sampleType, h.littleEndian);
    }
    return out;
  }

  return {
    width,
    height,
    pages,
    sampleType,
    littleEndian: h.littleEndian,
    bigTiff: h.bigTiff,
    description,
    software,
    thumbnails,
    metadata,
    readPageRaw,
    async readPage(i, out) {
      if (out.length !== width * height) throw new RangeError(`readPage needs an output of ${width * height} samples (width × height), got ${out.length}`);
      out.set(await readPageRaw(i));
    },
  };
}

function backToBack(offsets: number[], lengths: number[]): boolean {
  for (let k = 1; k < offsets.length; k++) if (offsets[k] !== offsets[k - 1]! + lengths[k - 1]!) return false;
  return true;
}

function shape(d: PageDesc): string {
  return `${d.width} × ${d.height} ${d.sampleType}${d.samples > 1 ? ` (${d.samples} samples per pixel)` : ''}`;
}

function chunkName(L: Layout, k: number, n: number): string {
  return n === 1 ? (L.tiled ? 'the tile' : 'the strip') : `${L.tiled ? 'tile' : 'strip'} ${k + 1}`;
}

async function readList(src: ByteSource, h: TiffHeader, type: number, pos: number, n: number, what: string): Promise<number[]> {
  const bytes = await readExact(src, pos, n * typeSize(type), what);
  return decodeNumbers(bytes, type, n, h.littleEndian, what);
}

/** Reads the byte ranges, one read per run of (nearly) adjacent ranges, returning one view per range. */
async function readChunks(src: ByteSource, offsets: number[], lengths: number[], what: string): Promise<Uint8Array[]> {
  const n = offsets.length;
  const groups: { start: number; end: number; members: number[] }[] = [];
  for (let k = 0; k < n; k++) {
    const at = offsets[k]!;
    const end = at + lengths[k]!;
    const g = groups[groups.length - 1];
    if (g !== undefined && at >= g.start && at <= g.end + MERGE_GAP) {
      g.end = Math.max(g.end, end);
      g.members.push(k);
    } else {
      groups.push({ start: at, end, members: [k] });
    }
  }
  const out = new Array<Uint8Array>(n);
  await Promise.all(groups.map(async (g) => {
    const bytes = await readExact(src, g.start, g.end - g.start, what);
    for (const k of g.members) out[k] = bytes.subarray(offsets[k]! - g.start, offsets[k]! - g.start + lengths[k]!);
  }));
  return out;
}

async function decompress(raw: Uint8Array, L: Layout, need: number, where: string, opts: OpenTiffOptions): Promise<Uint8Array> {
  let bytes: Uint8Array;
  try {
    if (L.compression === 1) bytes = raw;
    else if (L.compression === 32773) bytes = unpackBits(raw, need);
    else if (L.compression === 5) bytes = lzwDecode(raw, need);
    else bytes = await opts.inflate!(raw);
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    throw new TiffError(`${where} cannot be decompressed: ${L.compression === 5 || L.compression === 32773 ? why : `its Deflate data are corrupt (${why})`}`);
  }
  if (bytes.length < need) throw new TiffError(`${where} decompresses to ${bytes.length} bytes where its pixels need ${need} (corrupt or truncated data)`);
  return bytes.subarray(0, need);
}

/** Undoes the predictor on one decoded chunk and copies its pixels (of the chosen sample) into the page. */
function place(out: SampleArray, bytes: Uint8Array, L: Layout, k: number, width: number, height: number, type: SampleType, little: boolean): void {
  const spp = L.samplesInChunk;
  const rowLength = L.chunkWidth * spp;
  const rows = bytes.length / (rowLength * bytesPerSample(type));
  let chunk: SampleArray;
  if (L.predictor === 3) {
    chunk = toNative(undoFloatPredictor(bytes, rowLength, rows, bytesPerSample(type), spp), type, false);
  } else {
    chunk = toNative(bytes, type, little);
    if (L.predictor === 2) undoHorizontalPredictor(chunk, rowLength, rows, spp);
  }
  const x0 = L.tiled ? (k % L.across) * L.chunkWidth : 0;
  const y0 = L.tiled ? Math.floor(k / L.across) * L.chunkHeight : k * L.chunkHeight;
  const w = Math.min(L.chunkWidth, width - x0);
  const h = Math.min(rows, height - y0);
  const s = L.sampleInChunk;
  for (let r = 0; r < h; r++) {
    const dst = (y0 + r) * width + x0;
    const src = r * rowLength;
    if (spp === 1) out.set(chunk.subarray(src, src + w), dst);
    else for (let x = 0; x < w; x++) out[dst + x] = chunk[src + x * spp + s]!;
  }
}

async function textTag(src: ByteSource, ifd: Ifd, tag: number, what: string): Promise<string | undefined> {
  const e = ifd.entries.get(tag);
  if (e === undefined || e.count === 0 || typeSize(e.type) !== 1) return undefined;
  const bytes = await entryBytes(src, ifd, e, 0, Math.min(e.count, MAX_TEXT), what);
  const end = bytes.indexOf(0);
  return new TextDecoder('utf-8').decode(end === -1 ? bytes : bytes.subarray(0, end));
}

/** ScanImage 2016+ BigTIFFs keep their settings in a block right after the header (magic 117637889). */
async function scanImageHeader(src: ByteSource, h: TiffHeader): Promise<string | undefined> {
  if (!h.bigTiff || !h.littleEndian || h.firstIfd < 32 || src.size < 32) return undefined;
  const head = await readExact(src, 16, 16, 'the ScanImage header');
  const dv = new DataView(head.buffer, head.byteOffset, 16);
  if (dv.getUint32(0, true) !== 117637889) return undefined;
  const size = Math.min(dv.getUint32(8, true), MAX_TEXT, h.firstIfd - 32, src.size - 32);
  if (size <= 0) return undefined;
  const bytes = await readExact(src, 32, size, 'the ScanImage header');
  const end = bytes.indexOf(0);
  return new TextDecoder('utf-8').decode(end === -1 ? bytes : bytes.subarray(0, end));
}

/**
 * For an ImageJ file with one directory and `images` images: the layout of image i as one strip
 * at base + i × pageBytes, when page 1 is uncompressed and back to back; checks the file is long enough.
 */
async function imagejContiguous(
  src: ByteSource, h: TiffHeader, first: PageDesc, L: Layout, offType: number, offVal: number, images: number, maxPages: number,
): Promise<{ base: number; pageBytes: number; layout: Layout } | undefined> {
  if (L.compression !== 1 || L.predictor !== 1 || L.tiled || first.samples !== 1) return undefined;
  const offsets = L.chunks === 1 ? [offVal] : await readList(src, h, offType, offVal, L.chunks, "page 1's strip offsets");
  for (let k = 1; k < L.chunks; k++) if (offsets[k] !== offsets[k - 1]! + L.chunkBytes[k - 1]!) return undefined;
  if (images > maxPages) throw new TiffError(`the ImageJ description announces ${images} images, more than this reader opens (raise maxPages)`);
  const base = offsets[0]!;
  const pageBytes = first.width * first.height * bytesPerSample(first.sampleType);
  const fit = Math.floor((src.size - base) / pageBytes);
  if (fit < images) {
    throw new TiffError(`the ImageJ description says ${images} images follow one another, but the file ends after ${Math.max(0, fit)} of them (truncated?)`);
  }
  const layout: Layout = { ...L, chunkHeight: first.height, chunks: 1, chunkBytes: [pageBytes] };
  return { base, pageBytes, layout };
}
