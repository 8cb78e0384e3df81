/**
 * What one page's directory says: its size and sample type, and how its pixel data are cut into
 * strips or tiles and compressed (its layout). Refuses, by name, what the reader cannot decode.
 * Pure apart from reading its ByteSource (for the rare values that lie outside the directory).
 */

import { entryNumbers, localNumbers, typeSize, type Ifd, type TiffHeader } from './ifd.ts';
import { sampleTypeOf, type SampleType } from './samples.ts';
import type { ByteSource } from './source.ts';
import { TiffError } from './tiff-error.ts';

/** What `describePage` needs of the reader's options. */
export interface PageOptions {
  inflate?: unknown;
  sample?: number;
}

/** Larger pages are refused: a guard against garbage sizes making us allocate gigabytes. */
const MAX_PIXELS = 2 ** 28;
/** The baseline and extension tags the reader uses. */
export const T = {
  NewSubfileType: 254, SubfileType: 255, ImageWidth: 256, ImageLength: 257, BitsPerSample: 258, Compression: 259,
  ImageDescription: 270, StripOffsets: 273, SamplesPerPixel: 277, RowsPerStrip: 278, StripByteCounts: 279,
  PlanarConfiguration: 284, Software: 305, Predictor: 317, TileWidth: 322, TileLength: 323, TileOffsets: 324,
  TileByteCounts: 325, SampleFormat: 339,
} as const;

const COMPRESSION_NAMES: Record<number, string> = {
  2: 'CCITT Huffman', 3: 'CCITT fax 3', 4: 'CCITT fax 4', 6: 'old-style JPEG', 7: 'JPEG', 8: 'Deflate (zip)',
  32946: 'Deflate (zip)', 34712: 'JPEG 2000', 33003: 'JPEG 2000', 33005: 'JPEG 2000', 34887: 'LERC', 34925: 'LZMA',
  50000: 'Zstandard', 50001: 'WebP', 50002: 'JPEG XL', 34892: 'lossy JPEG',
};

/** How one page's pixel data are cut into strips or tiles, shared by all pages that cut them the same way. */
export interface Layout {
  compression: number;
  predictor: number;
  tiled: boolean;
  /** Rows per strip, or the tile's height. */
  chunkHeight: number;
  /** The image width for strips, the tile's width for tiles. */
  chunkWidth: number;
  across: number;
  /** Strips or tiles holding the chosen sample. */
  chunks: number;
  /** Samples per pixel inside a chunk (1 with separate planes) and which of them to keep. */
  samplesInChunk: number;
  sampleInChunk: number;
  /** With separate planes (PlanarConfiguration 2): the plane of the chosen sample, else 0. */
  plane: number;
  /** Decoded bytes of each chunk (filled in once per distinct layout). */
  chunkBytes: number[];
}

/** The per-page facts about one page, as read from its directory. */
export interface PageDesc {
  width: number;
  height: number;
  sampleType: SampleType;
  samples: number;
  layoutKey: string;
  layout: Layout;
}

/**
 * The first `count(spp)` values of each tag in `tags` that the page has, decoded from the
 * directory's own bytes where they lie (almost always) and read from the file otherwise.
 */
async function tagValues(src: ByteSource, h: TiffHeader, ifd: Ifd, tags: readonly number[], spp: number, page: string): Promise<Map<number, number[]>> {
  const out = new Map<number, number[]>();
  const pending: Promise<void>[] = [];
  const what = `${page}'s tag values`;
  for (const tag of tags) {
    const e = ifd.entries.get(tag);
    if (e === undefined || e.count === 0) continue;
    const n = Math.min(e.count, PER_SAMPLE.has(tag) ? spp : 1);
    const local = localNumbers(h, ifd, e, 0, n, what);
    if (local !== undefined) out.set(tag, local);
    else pending.push(entryNumbers(src, h, ifd, e, 0, n, what).then((v) => void out.set(tag, v)));
  }
  if (pending.length > 0) await Promise.all(pending);
  return out;
}

const PER_SAMPLE = new Set<number>([T.BitsPerSample, T.SampleFormat]);
const PAGE_TAGS = [
  T.NewSubfileType, T.SubfileType, T.ImageWidth, T.ImageLength, T.BitsPerSample, T.Compression, T.RowsPerStrip,
  T.PlanarConfiguration, T.Predictor, T.TileWidth, T.TileLength, T.SampleFormat,
] as const;

/** Reads one page's directory into its geometry and layout; null for a reduced-resolution page. */
export async function describePage(src: ByteSource, h: TiffHeader, ifd: Ifd, n: number, opts: PageOptions): Promise<PageDesc | null> {
  const page = `page ${n}`;
  const sppEntry = ifd.entries.get(T.SamplesPerPixel);
  const samples = sppEntry === undefined || sppEntry.count === 0 ? 1
    : (localNumbers(h, ifd, sppEntry, 0, 1, page) ?? (await entryNumbers(src, h, ifd, sppEntry, 0, 1, `${page}'s samples per pixel`)))[0]!;
  if (!Number.isInteger(samples) || samples < 1 || samples > 64) throw new TiffError(`${page} claims ${samples} samples per pixel (the file is corrupt)`);
  const values = await tagValues(src, h, ifd, PAGE_TAGS, samples, page);
  for (const [tag, vs] of values) {
    if (!vs.every((v) => Number.isSafeInteger(v) && v >= 0)) throw new TiffError(`${page}'s tag ${tag} holds an impossible value (${vs.join(', ')}; the file is corrupt)`);
  }
  const get = (tag: number, fallback: number) => values.get(tag)?.[0] ?? fallback;
  const uniform = (tag: number, fallback: number, name: string): number => {
    const vs = values.get(tag) ?? [fallback];
    if (vs.some((v) => v !== vs[0])) throw new TiffError(`${page} stores its samples with different ${name} (${vs.join(', ')}), which this reader does not support`);
    return vs[0]!;
  };
  if ((get(T.NewSubfileType, 0) & 1) === 1 || get(T.SubfileType, 1) === 2) return null;
  if (!values.has(T.ImageWidth) || !values.has(T.ImageLength)) {
    throw new TiffError(`${page} does not say how large it is (no ImageWidth or ImageLength; the file is corrupt)`);
  }
  const width = get(T.ImageWidth, 0);
  const height = get(T.ImageLength, 0);
  if (width === 0 || height === 0) throw new TiffError(`${page} is ${width} × ${height} pixels: an image needs at least one pixel each way`);
  if (width * height > MAX_PIXELS) throw new TiffError(`${page} is ${width} × ${height} pixels, larger than this reader opens (corrupt?)`);
  const sample = opts.sample ?? 0;
  if (samples > 1 && opts.sample === undefined) {
    throw new TiffError(`${page} holds ${samples} samples per pixel (an RGB image?); choose which sample to read (0–${samples - 1})`);
  }
  if (!Number.isInteger(sample) || sample < 0 || sample >= samples) {
    throw new TiffError(`sample ${sample} was asked for, but ${page} holds ${samples} sample${samples > 1 ? 's' : ''} per pixel (0–${samples - 1})`);
  }
  // TIFF's default is 1 bit per sample (black-and-white images).
  const bits = uniform(T.BitsPerSample, 1, 'bits per sample');
  const format = uniform(T.SampleFormat, 1, 'sample formats');
  const sampleType = sampleTypeOf(bits, format);
  if (sampleType === undefined) {
    const kind = format === 2 ? 'signed integer' : format === 3 ? 'floating-point' : format === 1 || format === 4 ? 'unsigned integer' : `format-${format}`;
    throw new TiffError(`${page} stores ${bits}-bit ${kind} samples; this reader supports 8-, 16- and 32-bit integers and 32- and 64-bit floats`);
  }
  const compression = get(T.Compression, 1);
  const predictor = get(T.Predictor, 1);
  const planar = samples === 1 ? 1 : get(T.PlanarConfiguration, 1);
  if (planar !== 1 && planar !== 2) throw new TiffError(`${page} has an unknown PlanarConfiguration (${planar}; the file is corrupt)`);
  const tiled = ifd.entries.has(T.TileOffsets) || ifd.entries.has(T.TileWidth);
  const samplesInChunk = planar === 2 ? 1 : samples;
  const common = { compression, predictor, tiled, samplesInChunk, sampleInChunk: planar === 2 ? 0 : sample, plane: planar === 2 ? sample : 0 };
  let layout: Layout;
  if (tiled) {
    const tw = get(T.TileWidth, 0);
    const tl = get(T.TileLength, 0);
    if (tw === 0 || tl === 0 || tw * tl > MAX_PIXELS) throw new TiffError(`${page} has tiles of ${tw} × ${tl} pixels (the file is corrupt)`);
    const across = Math.ceil(width / tw);
    const chunks = across * Math.ceil(height / tl);
    layout = { ...common, chunkHeight: tl, chunkWidth: tw, across, chunks, chunkBytes: [] };
  } else {
    let rows = get(T.RowsPerStrip, height);
    if (rows === 0 || rows > height) rows = height;
    layout = { ...common, chunkHeight: rows, chunkWidth: width, across: 1, chunks: Math.ceil(height / rows), chunkBytes: [] };
  }
  const layoutKey = `${compression},${predictor},${planar},${tiled ? 1 : 0},${layout.chunkWidth},${layout.chunkHeight}`;
  return { width, height, sampleType, samples, layoutKey, layout };
}

/** Decoded bytes of each strip or tile of a layout (tiles are whole even at the image's edges). */
export function chunkSizes(L: Layout, width: number, height: number, bps: number): number[] {
  const row = L.chunkWidth * L.samplesInChunk * bps;
  return Array.from({ length: L.chunks }, (_, k) => row * (L.tiled ? L.chunkHeight : Math.min(L.chunkHeight, height - k * L.chunkHeight)));
}

/** Refuses compressions and predictors this reader cannot decode, naming them. */
export function checkCodec(L: Layout, type: SampleType, n: number, opts: PageOptions): void {
  const page = `page ${n}`;
  const c = L.compression;
  if (c === 8 || c === 32946) {
    if (opts.inflate === undefined) {
      throw new TiffError(`${page} is compressed with Deflate (zip), which needs an inflate function this reader was not given; save the recording uncompressed or with LZW`);
    }
  } else if (c !== 1 && c !== 5 && c !== 32773) {
    const name = COMPRESSION_NAMES[c] ?? 'an unknown method';
    throw new TiffError(`${page} is compressed with ${name} (TIFF compression ${c}), which this reader does not support; save the recording uncompressed, or with LZW, PackBits or Deflate`);
  }
  const float = type === 'float32' || type === 'float64';
  if (L.predictor === 2 && float) throw new TiffError(`${page} applies the integer predictor to floating-point samples (the file is corrupt)`);
  if (L.predictor === 3 && !float) throw new TiffError(`${page} applies the floating-point predictor to integer samples (the file is corrupt)`);
  if (L.predictor !== 1 && L.predictor !== 2 && L.predictor !== 3) throw new TiffError(`${page} uses TIFF predictor ${L.predictor}, which this reader does not support`);
}

/**
 * Where page `n`'s chunk offsets and byte counts lie: [offset type, value, count type, value], each
 * value the number itself for a single chunk, else the file position of the list of the chunks
 * holding our sample (checked to lie in the file).
 */
export async function chunkTable(src: ByteSource, h: TiffHeader, ifd: Ifd, n: number, L: Layout, samples: number): Promise<[number, number, number, number]> {
  const page = `page ${n}`;
  const kind = L.tiled ? 'tile' : 'strip';
  const offsets = ifd.entries.get(L.tiled ? T.TileOffsets : T.StripOffsets);
  const counts = ifd.entries.get(L.tiled ? T.TileByteCounts : T.StripByteCounts);
  const total = L.samplesInChunk === samples ? L.chunks : L.chunks * samples;
  const firstChunk = L.plane * L.chunks;
  if (offsets === undefined) throw new TiffError(`${page} does not say where its pixel data are (no ${L.tiled ? 'TileOffsets' : 'StripOffsets'}; the file is corrupt)`);
  if (offsets.count < total) {
    throw new TiffError(`${page} lists ${offsets.count} ${kind}${offsets.count === 1 ? '' : 's'} of pixel data where its size needs ${total} (the file is corrupt)`);
  }
  if (counts === undefined && L.compression !== 1) {
    throw new TiffError(`${page} does not give the sizes of its compressed ${kind}s (no byte counts; the file is corrupt)`);
  }
  if (counts !== undefined && counts.count < total) {
    throw new TiffError(`${page} gives ${counts.count} ${kind} size${counts.count === 1 ? '' : 's'} where its size needs ${total} (the file is corrupt)`);
  }
  const list = async (e: typeof offsets, what: string): Promise<[number, number]> => {
    if (![3, 4, 13, 16, 18].includes(e.type)) throw new TiffError(`${page}'s ${what} have field type ${e.type}, not an integer type (the file is corrupt)`);
    if (L.chunks === 1) {
      const v = localNumbers(h, ifd, e, firstChunk, 1, `${page}'s ${what}`) ?? (await entryNumbers(src, h, ifd, e, firstChunk, 1, `${page}'s ${what}`));
      return [e.type, v[0]!];
    }
    const size = typeSize(e.type);
    const pos = e.pos + firstChunk * size;
    if (pos + L.chunks * size > src.size) throw new TiffError(`${page}'s ${what} would extend beyond the end of the file (truncated?)`);
    return [e.type, pos];
  };
  const [ot, ov] = await list(offsets, `${kind} offsets`);
  const [ct, cv] = counts === undefined ? [0, 0] : await list(counts, `${kind} sizes`);
  return [ot, ov, ct, cv];
}
