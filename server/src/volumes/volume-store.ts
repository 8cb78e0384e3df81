/**
 * The volumes directory (`<dataDir>/volumes/<dataset>/<layer>/…`): safe resolution of request
 * paths to files (every segment checked, then realpath must stay inside the directory, so
 * neither `..` in any encoding nor a symlink can escape), dataset and layer listings, and the
 * datasets still being generated (answered with 503 until ready). No HTTP here.
 * Effects: file-system reads.
 */
import fs from 'node:fs/promises';
import type { Stats } from 'node:fs';
import path from 'node:path';
import { openLayer, type Volume } from './chunk-source.ts';
import { readMeta, type DatasetMeta, type LayerMeta } from './meta.ts';
import { parseInfo, VolumeError, type PrecomputedInfo } from './precomputed.ts';

/**
 * How long a directory's realpath is trusted. A directory replaced by a symlink leading out is
 * noticed after this; serving by path has such a window anyway (between the check and the open),
 * and the cache makes chunk requests ~25 % cheaper (realpath costs an lstat per path component).
 */
const DIR_CACHE_MS = 1000;

export class VolumeUnavailable extends Error {
  constructor(readonly dataset: string) {
    super(`dataset ${dataset} is being generated; retry in a few seconds`);
  }
}

export type Resolved = { kind: 'dir'; path: string } | { kind: 'file'; path: string; stat: Stats; gzip: boolean };

/** A layer: Neuroglancer precomputed (with its `info`), or zarr v2 (served as files, not sampled). */
export type LayerSummary =
  | { name: string; format: 'precomputed'; info: PrecomputedInfo; meta: LayerMeta | null }
  | { name: string; format: 'zarr'; zarr: Record<string, unknown>; meta: LayerMeta | null };

/** zarr v2 metadata files: the only names with a leading dot that are served. */
export const ZARR_METADATA: ReadonlySet<string> = new Set(['.zarray', '.zattrs', '.zgroup', '.zmetadata']);

export interface DatasetSummary {
  name: string;
  status: 'ready' | 'generating';
  title: string | null;
  layers: string[];
}

/**
 * Throws VolumeError('bad-request') unless `segment` (already percent-decoded) is a plain name:
 * not empty, not `.`/`..` or hidden (leading dot; zarr's `.zarray` & co. excepted), no slash,
 * backslash, NUL or control character.
 */
export function checkSegment(segment: string): void {
  if (segment === '' || (segment.startsWith('.') && !ZARR_METADATA.has(segment)) || /[/\\\u0000-\u001f\u007f]/.test(segment)) throw new VolumeError('bad-request', `path segment ${JSON.stringify(segment)} is not allowed (no empty, hidden, "..", slash, backslash or control characters)`);
}

export class Volumes {
  private readonly generating = new Map<string, Promise<unknown>>();
  /** realpath of the root once it exists (the root itself is not expected to move while serving). */
  private rootReal: string | null = null;
  /** Directories known to resolve inside the root, and when that was checked. */
  private readonly dirs = new Map<string, { real: string; at: number }>();

  constructor(readonly root: string) {}

  /** Marks `dataset` as being generated until `work` settles. */
  track(dataset: string, work: Promise<unknown>): void {
    const settled = work.then(
      () => undefined,
      () => undefined,
    );
    this.generating.set(dataset, settled);
    void settled.then(() => {
      if (this.generating.get(dataset) === settled) this.generating.delete(dataset);
    });
  }

  isGenerating(dataset: string): boolean {
    return this.generating.has(dataset);
  }

  /** Resolves when `dataset` is not (or no longer) being generated. */
  async whenReady(dataset: string): Promise<void> {
    await this.generating.get(dataset);
  }

  /** Throws VolumeUnavailable while `dataset` is being generated. */
  requireReady(dataset: string): void {
    if (this.generating.has(dataset)) throw new VolumeUnavailable(dataset);
  }

  private async realRoot(): Promise<string | null> {
    if (this.rootReal) return this.rootReal;
    try {
      return (this.rootReal = await fs.realpath(this.root));
    } catch {
      return null;
    }
  }

  /** realpath of `p` if it exists and lies inside the root; null otherwise. */
  private async inside(root: string, p: string): Promise<string | null> {
    let real: string;
    try {
      real = await fs.realpath(p);
    } catch {
      return null;
    }
    return real === root || real.startsWith(root + path.sep) ? real : null;
  }

  /** realpath of directory `dir` if inside the root, remembered for DIR_CACHE_MS (every chunk of a scale lives in one directory). */
  private async insideDir(root: string, dir: string): Promise<string | null> {
    const now = Date.now();
    const hit = this.dirs.get(dir);
    if (hit && now - hit.at < DIR_CACHE_MS) return hit.real;
    const real = await this.inside(root, dir);
    if (real) {
      if (this.dirs.size >= 1024) this.dirs.clear();
      this.dirs.set(dir, { real, at: now });
    }
    return real;
  }

  /**
   * The file or directory at `segments` below the root (a file may be stored as `<name>.gz`).
   * VolumeError('not-found') when absent or when it resolves outside the root: the entry's
   * parent directory must resolve (realpath) inside the root, and an entry that is itself a
   * symlink must too.
   */
  async resolve(segments: string[]): Promise<Resolved> {
    segments.forEach(checkSegment);
    const root = await this.realRoot();
    const where = segments.join('/');
    if (!root) throw new VolumeError('not-found', `no volume at ${where} (the volumes directory does not exist)`);
    const target = path.join(root, ...segments);
    for (const [candidate, gzip] of [[target, false], [target + '.gz', true]] as const) {
      let stat: Stats;
      try {
        stat = await fs.lstat(candidate);
      } catch {
        continue;
      }
      let real: string | null;
      if (stat.isSymbolicLink()) {
        real = await this.inside(root, candidate);
        if (real) stat = await fs.stat(real);
      } else {
        const dir = await this.insideDir(root, path.dirname(candidate));
        real = dir && path.join(dir, path.basename(candidate));
      }
      if (!real) continue;
      if (stat.isDirectory()) {
        if (!gzip) return { kind: 'dir', path: real };
      } else if (stat.isFile()) return { kind: 'file', path: real, stat, gzip };
    }
    throw new VolumeError('not-found', `no volume file at ${where}`);
  }

  /** Datasets: directories of the root (hidden ones are temporary and skipped) and those being generated. */
  async listDatasets(): Promise<DatasetSummary[]> {
    const root = await this.realRoot();
    const names = new Set(this.generating.keys());
    if (root) for (const e of await fs.readdir(root, { withFileTypes: true })) if (!e.name.startsWith('.') && (e.isDirectory() || e.isSymbolicLink())) names.add(e.name);
    const out: DatasetSummary[] = [];
    for (const name of [...names].sort()) {
      if (this.generating.has(name)) {
        out.push({ name, status: 'generating', title: null, layers: [] });
        continue;
      }
      let dir: Resolved;
      try {
        dir = await this.resolve([name]);
      } catch {
        continue; // a symlink out of the root, or gone meanwhile
      }
      if (dir.kind !== 'dir') continue;
      const meta = await readMeta<DatasetMeta>(path.join(dir.path, 'plexus.json'));
      out.push({ name, status: 'ready', title: typeof meta?.title === 'string' ? meta.title : null, layers: (await this.layersOf(dir.path)).map((l) => l.name) });
    }
    return out;
  }

  private async layersOf(dir: string): Promise<LayerSummary[]> {
    const out: LayerSummary[] = [];
    const json = async (file: string): Promise<unknown> => JSON.parse(await fs.readFile(file, 'utf8'));
    for (const e of (await fs.readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
      if (e.name.startsWith('.') || !e.isDirectory()) continue;
      const at = path.join(dir, e.name);
      const meta = await readMeta<LayerMeta>(path.join(at, 'plexus.json'));
      try {
        out.push({ name: e.name, format: 'precomputed', info: parseInfo(await json(path.join(at, 'info')), `${e.name}/info`), meta });
        continue;
      } catch {
        // not a (supported) precomputed layer
      }
      for (const file of ['.zarray', '.zgroup']) {
        try {
          out.push({ name: e.name, format: 'zarr', zarr: (await json(path.join(at, file))) as Record<string, unknown>, meta });
          break;
        } catch {
          // not this kind of zarr node
        }
      }
    }
    return out;
  }

  /** A dataset's plexus.json, its layers (with info and plexus.json) and its CSV tables. */
  async describeDataset(dataset: string): Promise<{ name: string; meta: DatasetMeta | null; layers: LayerSummary[]; tables: string[] }> {
    this.requireReady(dataset);
    const dir = await this.resolve([dataset]);
    if (dir.kind !== 'dir') throw new VolumeError('not-found', `${dataset} is not a dataset directory`);
    let tables: string[] = [];
    try {
      tables = (await fs.readdir(path.join(dir.path, 'tables'))).filter((n) => n.endsWith('.csv') && !n.startsWith('.')).sort();
    } catch {
      // no tables
    }
    return { name: dataset, meta: await readMeta<DatasetMeta>(path.join(dir.path, 'plexus.json')), layers: await this.layersOf(dir.path), tables };
  }

  /** Opens layer `layer` of `dataset` for sampling. */
  async openLayer(dataset: string, layer: string): Promise<Volume> {
    this.requireReady(dataset);
    const dir = await this.resolve([dataset, layer]);
    if (dir.kind !== 'dir') throw new VolumeError('not-found', `${dataset}/${layer} is not a layer directory`);
    const zarr = await Promise.all(['.zarray', '.zgroup'].map((f) => fs.stat(path.join(dir.path, f)).then(() => true, () => false)));
    if (zarr.some(Boolean)) throw new VolumeError('unsupported', `${dataset}/${layer} is a zarr layer: it is served under /volumes, but sampling reads precomputed layers only`);
    return openLayer(dir.path, `${dataset}/${layer}`);
  }
}
