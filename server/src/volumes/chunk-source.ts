/**
 * Reading a precomputed layer from a directory the way the viewer does: its `info`, and chunk
 * files by name, stored raw (`x0-x1_y0-y1_z0-z1`) or gzip-compressed (`….gz`), gunzipped here.
 * `sampling.ts` reads through the `ChunkSource` interface only, so another store (HTTP, a
 * notebook kernel's files) can stand in. Effects: file reads.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { parseInfo, VolumeError, type PrecomputedInfo } from './precomputed.ts';

const gunzip = promisify(zlib.gunzip);

export interface ChunkSource {
  /** The decompressed bytes of chunk `name` of the scale with key `key`, or null when it does not exist. */
  readChunk(key: string, name: string): Promise<Uint8Array | null>;
}

/** A precomputed layer opened for sampling. */
export interface Volume {
  /** For messages: `<dataset>/<layer>`. */
  name: string;
  info: PrecomputedInfo;
  source: ChunkSource;
}

async function readIfExists(file: string): Promise<Buffer | null> {
  try {
    return await fs.readFile(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}

/** Chunks of the layer in `dir` (a directory already known to be safe to read). */
export function fileChunkSource(dir: string): ChunkSource {
  return {
    async readChunk(key, name) {
      // Keys may be relative paths in the format; only plain sub-directories are followed here.
      if (key.split('/').some((s) => s === '..' || s === '.' || s === '') || key.includes('\\')) throw new VolumeError('unsupported', `scale key "${key}" is not a plain sub-directory`);
      const file = path.join(dir, ...key.split('/'), name);
      const raw = await readIfExists(file);
      if (raw) return raw;
      const gz = await readIfExists(file + '.gz');
      if (!gz) return null;
      try {
        return await gunzip(gz);
      } catch (e) {
        throw new VolumeError('corrupt', `${name}.gz of scale ${key} is not valid gzip: ${(e as Error).message}`);
      }
    },
  };
}

/** Opens the layer in `dir`: reads and validates its `info`. */
export async function openLayer(dir: string, name: string): Promise<Volume> {
  const text = await readIfExists(path.join(dir, 'info'));
  if (!text) throw new VolumeError('not-found', `layer ${name} has no info file`);
  let json: unknown;
  try {
    json = JSON.parse(text.toString('utf8'));
  } catch {
    throw new VolumeError('corrupt', `${name}/info is not valid JSON`);
  }
  return { name, info: parseInfo(json, `${name}/info`), source: fileChunkSource(dir) };
}
