/**
 * Imports a multi-page TIFF recording (ScanImage, ImageJ/Fiji, OME, Bruker, …) as a Plexus
 * dataset: one channel and plane of it becomes the precomputed layers `movie` (z = time, with a
 * 2×2-downsampled scale as the demo has), `mean` and `max`, each with its `plexus.json`, and the
 * dataset's `plexus.json` last. The file is read page by page and written one chunk slab (64 frames)
 * at a time while earlier chunks compress on the thread pool, so memory stays bounded whatever the
 * file's size. The dataset appears atomically: it is written into a hidden sibling
 * `.<dataset>.tmp-<pid>-<hex>` and renamed into place when complete; on any failure or abort the
 * temporary directory is removed and nothing is left.
 * Error messages are for the person who uploaded the file and never contain server paths:
 * `TiffError` (the file) and `TiffImportError` (the request) are theirs to fix; an aborted import
 * throws a DOMException named 'AbortError'; other failures keep the original error as `cause`.
 * Effects: reads `file`; creates `<volumesDir>/<dataset>`; removes temporary directories of
 * imports (and demo generations) whose process no longer runs.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { getSystemErrorMap } from 'node:util';
import { openTiff, selectPages, TiffError, type ByteSource } from '@plexus/calcium/tiff/index';
import type { DatasetMeta, LayerMeta } from '../volumes/meta.ts';
import type { DataType, Vec3 } from '../volumes/precomputed.ts';
import { makeInfo, PrecomputedWriter } from '../volumes/writer.ts';

export interface TiffImportOptions {
  /** Path of the uploaded TIFF on disk. */
  file: string;
  /** Name of the file shown in descriptions (the upload's original name); default: the base name of `file`. */
  sourceName?: string;
  /** `<dataDir>/volumes`. */
  volumesDir: string;
  /** Name of the dataset to create: a plain name; an existing one is refused. */
  dataset: string;
  title?: string;
  /** 0-based channel and plane (default 0), checked against the file's metadata. */
  channel?: number;
  plane?: number;
  /** Frames per second; overrides the file's metadata. Required when the file gives none and has several frames. */
  frameRate?: number;
  /** Pixel size; default 1 (and the descriptions say it was assumed). */
  micronsPerPixel?: number;
  onProgress?: (p: { stage: 'reading'; done: number; total: number }) => void;
  signal?: AbortSignal;
  /** Inflates zlib data, for Deflate-compressed files: pass `zlib.inflateSync`. */
  inflate?: (b: Uint8Array) => Uint8Array;
}

export interface TiffImportResult {
  dataset: string;
  layers: string[];
  width: number;
  height: number;
  frames: number;
  frameRate: number | null;
  /** The file's sample type (the movie stores uint8/uint16 as uint16, everything else as float32). */
  sampleType: string;
  channels: number;
  planes: number;
  /** Trailing pages left out because they do not make a whole time point (an interrupted acquisition). */
  droppedPages: number;
  /** Bytes of every file of the dataset. */
  bytesWritten: number;
}

/** A request the person can correct (a bad option, a taken name, a missing frame rate); the message is for them. */
export class TiffImportError extends Error {
  override name = 'TiffImportError';
  /** `exists`: the dataset name is taken (HTTP 409); `bad-request`: anything else (400). */
  readonly kind: 'bad-request' | 'exists';
  constructor(message: string, options?: ErrorOptions & { kind?: 'bad-request' | 'exists' }) {
    super(message, options);
    this.kind = options?.kind ?? 'bad-request';
  }
}

/** Frames per chunk slab (the movie's chunk depth) unless a slab of that many frames would exceed SLAB_BUDGET. */
const SLAB_FRAMES = 64;
/** Largest slab buffer, bytes: frames of 2048² float32 get 16-frame chunks instead of a 1 GiB slab. */
const SLAB_BUDGET = 256 * 2 ** 20;
const PLANE_CHUNK: Vec3 = [128, 128, 1];
/** Progress reports per import, about. */
const PROGRESS_STEPS = 100;
export const TIFF_IMPORT_GENERATOR = { name: 'plexus-tiff-import', version: 1 } as const;

/** Datasets (resolved paths) being imported by this process; another process's import of the same name fails at the rename. */
const importing = new Set<string>();

/** A ByteSource over an open file (reads are positional, so concurrent reads are fine). */
export function fileByteSource(handle: FileHandle, size: number): ByteSource {
  return {
    size,
    async read(offset, length) {
      const start = Math.max(0, Math.min(offset, size));
      const n = Math.max(0, Math.min(length, size - start));
      const buf = new Uint8Array(n);
      let got = 0;
      while (got < n) {
        const { bytesRead } = await handle.read(buf, got, n - got, start + got);
        if (bytesRead === 0) break;
        got += bytesRead;
      }
      return got === n ? buf : buf.subarray(0, got);
    },
  };
}

/** Imports the TIFF file `opts.file` as dataset `opts.dataset` (see the file header). */
export async function importTiff(opts: TiffImportOptions): Promise<TiffImportResult> {
  const sourceName = opts.sourceName ?? path.basename(opts.file);
  let handle: FileHandle;
  try {
    handle = await fs.open(opts.file, 'r');
  } catch (e) {
    throw new TiffImportError(`the uploaded file cannot be opened (${systemReason(e)})`, { cause: e });
  }
  try {
    const { size } = await handle.stat();
    return await importTiffFromSource(fileByteSource(handle, size), { ...opts, sourceName });
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/** Imports the TIFF that `source` reads as dataset `opts.dataset`: `importTiff` without the file handling. */
export async function importTiffFromSource(source: ByteSource, opts: Omit<TiffImportOptions, 'file'> & { sourceName: string }): Promise<TiffImportResult> {
  checkOptions(opts);
  const { volumesDir, dataset, signal } = opts;
  const target = path.join(volumesDir, dataset);
  const taken = () => new TiffImportError(`a dataset named "${dataset}" already exists: choose another name`, { kind: 'exists' });
  // Reserved before the first await, so two imports of one name cannot both pass the checks.
  const key = path.resolve(target);
  if (importing.has(key)) throw new TiffImportError(`a dataset named "${dataset}" is being imported already: choose another name`, { kind: 'exists' });
  importing.add(key);
  let tmp: string | null = null;
  try {
    if (await exists(target)) throw taken();
    stopIfAborted(signal);
    await fs.mkdir(volumesDir, { recursive: true });
    await removeLeftovers(volumesDir);
    tmp = path.join(volumesDir, `.${dataset}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
    await fs.mkdir(tmp);
    const result = await writeDataset(source, tmp, opts);
    stopIfAborted(signal);
    if (await exists(target)) throw taken();
    // rename replaces an empty directory: made meanwhile by another process, it is lost, which is harmless.
    await fs.rename(tmp, target).catch((e: NodeJS.ErrnoException) => {
      throw e.code === 'ENOTEMPTY' || e.code === 'EEXIST' || e.code === 'ENOTDIR' ? taken() : e;
    });
    tmp = null;
    return result;
  } catch (e) {
    if (tmp !== null) await fs.rm(tmp, { recursive: true, force: true }).catch(() => undefined);
    throw forPerson(e, signal, [tmp, target, volumesDir]);
  } finally {
    importing.delete(key);
  }
}

function checkOptions(o: Omit<TiffImportOptions, 'file'>): void {
  const name = o.dataset;
  if (typeof name !== 'string' || name === '' || name.length > 200 || name.startsWith('.') || /[/\\\u0000-\u001f\u007f]/.test(name)) {
    throw new TiffImportError(`the dataset name ${JSON.stringify(name)} is not allowed: use a plain name of at most 200 characters (no slash, backslash, leading dot or control characters)`);
  }
  for (const k of ['channel', 'plane'] as const) {
    const v = o[k];
    if (v !== undefined && (!Number.isInteger(v) || v < 0)) throw new TiffImportError(`${k} must be a whole number ≥ 0 (counting from 0), not ${v}`);
  }
  const positive = (v: number | undefined, what: string) => {
    if (v !== undefined && !(Number.isFinite(v) && v > 0)) throw new TiffImportError(`${what} must be a positive number, not ${v}`);
  };
  positive(o.frameRate, 'frameRate (frames per second)');
  positive(o.micronsPerPixel, 'micronsPerPixel');
}

/** Writes the layers and descriptions into `dir` (an empty directory). */
async function writeDataset(source: ByteSource, dir: string, o: Omit<TiffImportOptions, 'file'> & { sourceName: string }): Promise<TiffImportResult> {
  const stack = await openTiff(source, { inflate: o.inflate, signal: o.signal });
  const sel = selectPages(stack, { channel: o.channel, plane: o.plane, partial: 'drop' });
  const { width: W, height: H, frames: F } = sel;
  const meta = stack.metadata;
  const rate = o.frameRate ?? (meta.frameRate !== undefined && Number.isFinite(meta.frameRate) && meta.frameRate > 0 ? meta.frameRate : undefined);
  if (rate === undefined && F > 1) throw new TiffImportError('the file does not say its frame rate: give frameRate');
  const rateFrom = o.frameRate !== undefined ? 'as given' : `from the file's ${meta.source === 'unknown' ? '' : `${metaName(meta.source)} `}metadata`;
  const um = o.micronsPerPixel ?? 1;
  const nm = Math.round(um * 1e6) / 1000;
  // Without a frame rate (a single frame) z has no unit: one step of 1.
  const frameNs = rate === undefined ? 1 : Math.round(1e9 / rate);
  const planeZ = F * frameNs;
  const movieType: DataType = stack.sampleType === 'uint8' || stack.sampleType === 'uint16' ? 'uint16' : 'float32';
  const bytes = movieType === 'uint16' ? 2 : 4;
  const slabFrames = Math.min(SLAB_FRAMES, 2 ** Math.floor(Math.log2(Math.max(1, SLAB_BUDGET / (W * H * bytes)))));
  const chunk: Vec3 = [64, 64, slabFrames];
  const [w2, h2] = [Math.ceil(W / 2), Math.ceil(H / 2)];

  const movie = new PrecomputedWriter(path.join(dir, 'movie'), makeInfo('image', movieType, [
    { size: [W, H, F], resolution: [nm, nm, frameNs], chunk },
    { size: [w2, h2, F], resolution: [2 * nm, 2 * nm, frameNs], chunk },
  ]), { compression: 'noisy' });
  const writers = [movie];
  try {
    await movie.init();
    const n = W * H;
    const slab = movieType === 'uint16' ? new Uint16Array(n * slabFrames) : new Float32Array(n * slabFrames);
    const small = movieType === 'uint16' ? new Uint16Array(w2 * h2 * slabFrames) : new Float32Array(w2 * h2 * slabFrames);
    const sum = new Float64Array(n);
    const max = movieType === 'uint16' ? new Uint16Array(n) : new Float32Array(n).fill(-Infinity);
    const step = Math.max(1, Math.ceil(F / PROGRESS_STEPS));
    o.onProgress?.({ stage: 'reading', done: 0, total: F });
    for (let z0 = 0; z0 < F; z0 += slabFrames) {
      const z1 = Math.min(F, z0 + slabFrames);
      const data = slab.subarray(0, n * (z1 - z0));
      for (let f = z0; f < z1; f++) {
        stopIfAborted(o.signal);
        const frame = data.subarray((f - z0) * n, (f - z0 + 1) * n);
        frame.set(await stack.readPageRaw(sel.pageOf(f)));
        accumulate(frame, sum, max);
        if ((f + 1) % step === 0 || f + 1 === F) o.onProgress?.({ stage: 'reading', done: f + 1, total: F });
      }
      // writeRegion has copied its chunks out of `data` once it resolves, so the slab is reused.
      await movie.writeRegion(0, { min: [0, 0, z0], max: [W, H, z1] }, data);
      await movie.writeRegion(1, { min: [0, 0, z0], max: [w2, h2, z1] }, downsample2(data, small.subarray(0, w2 * h2 * (z1 - z0)), W, H, z1 - z0));
    }
    stopIfAborted(o.signal);
    const mean = Float32Array.from(sum, (s) => s / F);
    for (const [name, dataType, data] of [['mean', 'float32', mean], ['max', movieType, max]] as const) {
      const w = new PrecomputedWriter(path.join(dir, name), makeInfo('image', dataType, [{ size: [W, H, 1], resolution: [nm, nm, planeZ], chunk: PLANE_CHUNK }]));
      writers.push(w);
      await w.init();
      await w.writeScale(0, data);
    }
    for (const w of writers) await w.close();
  } catch (e) {
    // Let queued chunk writes finish before the caller removes the directory under them.
    await Promise.all(writers.map((w) => w.close().catch(() => undefined)));
    throw e;
  }

  const src = o.sourceName.replace(/^.*[/\\]/, '').replace(/[\u0000-\u001f\u007f]/g, '').slice(0, 200) || 'the uploaded file';
  const channels = meta.channels;
  const planes = meta.planes;
  const where = `channel ${sel.channel + 1} of ${channels}, plane ${sel.plane + 1} of ${planes}`;
  const timing = rate === undefined ? 'a single frame' : `${F} frame${F === 1 ? '' : 's'} at ${round(rate)} Hz (${rateFrom})`;
  const pixel = o.micronsPerPixel === undefined ? `${um} µm per pixel (assumed: no pixel size was given)` : `${round(um)} µm per pixel`;
  const stored = movieType === 'uint16' ? (stack.sampleType === 'uint16' ? '' : ` ${stack.sampleType} samples stored as uint16.`) : stack.sampleType === 'float32' ? '' : ` ${stack.sampleType} samples stored as float32.`;
  const dropped = sel.droppedPages > 0 ? ` The last ${sel.droppedPages} page${sel.droppedPages === 1 ? '' : 's'} did not make a whole time point and were left out.` : '';
  const origin = `Imported from ${src}, ${where}`;
  const movieDescription = `${origin}: ${W}×${H} pixels × ${timing}; ${pixel}${rate === undefined ? '' : '; z is time (frame index)'}.${stored}${dropped}`;
  const resolutionNote = (z: string) => `precomputed resolution is in nm: x, y ${nm} nm = ${round(um)} µm per pixel; ${z}`;
  const zNote = rate === undefined ? 'z 1 per frame (no frame rate: z has no unit)' : `z ${frameNs} "nm" per frame: read nm as ns (1 frame = ${frameNs} ns = 1/${round(rate)} s)`;
  const movieMeta: LayerMeta = {
    description: movieDescription,
    axes: { x: 'µm', y: 'µm', z: rate === undefined ? 'none' : 's' },
    voxelSize: [um, um, rate === undefined ? 1 : 1 / rate],
    ...(rate === undefined ? {} : { frameRate: rate }),
    values: 'ADU',
    resolutionNote: resolutionNote(zNote),
  };
  const projections = [
    { name: 'mean', values: 'ADU (mean)', description: `Mean projection over time of the movie (${origin}).` },
    { name: 'max', values: 'ADU (max)', description: `Maximum projection over time of the movie (${origin}).` },
  ];
  await writeJson(path.join(dir, 'movie', 'plexus.json'), movieMeta);
  for (const p of projections) {
    const layer: LayerMeta = {
      description: p.description,
      axes: { x: 'µm', y: 'µm', z: 'none' },
      voxelSize: [um, um, rate === undefined ? 1 : F / rate],
      values: p.values,
      resolutionNote: resolutionNote(`the single z plane is ${planeZ} "nm" thick, the whole recording (${F} frame${F === 1 ? '' : 's'}), so it shows at every frame of the movie`),
    };
    await writeJson(path.join(dir, p.name, 'plexus.json'), layer);
  }
  const datasetMeta: DatasetMeta = {
    plexusDataset: 1,
    title: o.title ?? src,
    description: `${movieDescription} The file has ${stack.pages} page${stack.pages === 1 ? '' : 's'} of ${stack.sampleType} (${channels} channel${channels === 1 ? '' : 's'} × ${planes} plane${planes === 1 ? '' : 's'}${meta.source === 'unknown' ? '' : `, ${metaName(meta.source)} metadata`}).`,
    generator: {
      ...TIFF_IMPORT_GENERATOR,
      params: { source: src, channel: sel.channel, plane: sel.plane, frameRate: rate ?? null, frameRateFrom: o.frameRate !== undefined ? 'option' : meta.source, micronsPerPixel: um, sampleType: stack.sampleType, pages: stack.pages, droppedPages: sel.droppedPages },
    },
    ...(rate === undefined ? {} : { frameRate: rate }),
    layers: {
      movie: { type: 'image', description: movieDescription },
      ...Object.fromEntries(projections.map((p) => [p.name, { type: 'image' as const, description: p.description }])),
    },
  };
  // Written last: a dataset directory with a plexus.json is complete.
  await writeJson(path.join(dir, 'plexus.json'), datasetMeta);
  return {
    dataset: o.dataset, layers: ['movie', 'mean', 'max'], width: W, height: H, frames: F, frameRate: rate ?? null,
    sampleType: stack.sampleType, channels, planes, droppedPages: sel.droppedPages, bytesWritten: await treeBytes(dir),
  };
}

/** Adds a frame to the running sum and maximum (a NaN never becomes the maximum). */
export function accumulate(frame: ArrayLike<number>, sum: Float64Array, max: Uint16Array | Float32Array): void {
  for (let i = 0; i < frame.length; i++) {
    const v = frame[i]!;
    sum[i]! += v;
    if (v > max[i]!) max[i] = v;
  }
}

/**
 * 2×2 mean of `nz` frames of W×H into `out` (⌈W/2⌉×⌈H/2⌉×nz; an odd last row or column averages
 * the pixels it has), rounded for integer output as the demo's movie is. Returns `out`.
 */
export function downsample2<T extends Uint16Array | Float32Array>(src: T, out: T, W: number, H: number, nz: number): T {
  const w = Math.ceil(W / 2);
  const h = Math.ceil(H / 2);
  const round = out instanceof Uint16Array;
  for (let z = 0; z < nz; z++)
    for (let y = 0; y < h; y++) {
      const r0 = W * (2 * y + H * z);
      const r1 = 2 * y + 1 < H ? r0 + W : r0;
      const o = w * (y + h * z);
      for (let x = 0; x < w; x++) {
        const x1 = 2 * x + 1 < W ? 2 * x + 1 : 2 * x;
        const s = src[r0 + 2 * x]! + src[r0 + x1]! + src[r1 + 2 * x]! + src[r1 + x1]!;
        out[o + x] = round ? (s + 2) >> 2 : s / 4;
      }
    }
  return out;
}

function metaName(source: string): string {
  return { scanimage: 'ScanImage', imagej: 'ImageJ', ome: 'OME' }[source] ?? source;
}

const round = (v: number): number => Number(v.toPrecision(6));

function stopIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw abortError(signal);
}

function abortError(signal: AbortSignal): DOMException {
  const e = new DOMException('the TIFF import was stopped', 'AbortError');
  Object.defineProperty(e, 'cause', { value: signal.reason });
  return e;
}

/**
 * The error to show: an abort as an AbortError, the reader's and our own messages as they are,
 * system errors by their code (their messages hold paths), anything else with known paths cut out.
 */
function forPerson(e: unknown, signal: AbortSignal | undefined, paths: (string | null)[]): unknown {
  if (signal?.aborted) return e instanceof DOMException && e.name === 'AbortError' ? e : abortError(signal);
  if (e instanceof TiffError || e instanceof TiffImportError) return e;
  const err = e instanceof Error ? e : new Error(String(e));
  const code = (err as NodeJS.ErrnoException).code;
  if (typeof code === 'string' && /^E[A-Z0-9]+$/.test(code)) {
    const syscall = (err as NodeJS.ErrnoException).syscall;
    const doing = syscall === 'read' ? 'reading the TIFF file' : 'writing the dataset';
    return new Error(`the TIFF import failed while ${doing} (${systemReason(err)})`, { cause: err });
  }
  let message = err.message;
  for (const p of paths) if (p) message = message.split(p).join(path.basename(p));
  return new Error(`the TIFF import failed: ${message}`, { cause: err });
}

/** "ENOSPC: no space left on device" from a Node system error, without the path its message carries. */
function systemReason(e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  const text = typeof err?.errno === 'number' ? getSystemErrorMap().get(err.errno)?.[1] : undefined;
  return err?.code ? `${err.code}${text ? `: ${text}` : ''}` : 'unknown error';
}

async function exists(p: string): Promise<boolean> {
  return fs.lstat(p).then(() => true, () => false);
}

async function writeJson(file: string, value: unknown): Promise<void> {
  await fs.writeFile(file, JSON.stringify(value, null, 1) + '\n');
}

async function treeBytes(dir: string): Promise<number> {
  let total = 0;
  for (const e of await fs.readdir(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) total += (await fs.stat(path.join(e.parentPath, e.name))).size;
  }
  return total;
}

/**
 * Removes `.<name>.tmp-<pid>-…` directories of processes that no longer run (an import or demo
 * generation that crashed); this process's own, and those of running processes, stay.
 */
async function removeLeftovers(root: string): Promise<void> {
  for (const entry of await fs.readdir(root).catch(() => [] as string[])) {
    const m = /^\..+\.tmp-(\d+)-[0-9a-f]+$/.exec(entry);
    if (!m) continue;
    const pid = Number(m[1]);
    if (pid === process.pid || isRunning(pid)) continue;
    await fs.rm(path.join(root, entry), { recursive: true, force: true }).catch(() => undefined);
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
