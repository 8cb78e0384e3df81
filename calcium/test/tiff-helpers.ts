/**
 * Helpers for the TIFF tests: deterministic page contents for every sample type, a ByteSource that
 * records what was read, and a way to find a tag's value in written bytes to damage it. Pure.
 */

import type { ByteSource } from '../src/tiff/source.ts';
import { bytesSource } from '../src/tiff/source.ts';
import type { SampleType } from '../src/tiff/samples.ts';

export const SAMPLE_TYPES: SampleType[] = ['uint8', 'int8', 'uint16', 'int16', 'uint32', 'int32', 'float32', 'float64'];

const CTOR = { uint8: Uint8Array, int8: Int8Array, uint16: Uint16Array, int16: Int16Array, uint32: Uint32Array, int32: Int32Array, float32: Float32Array, float64: Float64Array };

/** Page `p` of a test recording: values spread over the type's range (negative, large, fractional), as that typed array. */
export function pattern(type: SampleType, width: number, height: number, p: number, samples = 1) {
  const a = new CTOR[type](width * height * samples);
  const span = { uint8: 251, int8: 251, uint16: 65521, int16: 65521, uint32: 4294967291, int32: 4294967291, float32: 0, float64: 0 }[type];
  const offset = type.startsWith('int') ? -span / 2 : 0;
  for (let i = 0; i < a.length; i++) {
    const k = i * 7919 + p * 104729 + (i % 13) * 31;
    a[i] = span === 0 ? (k % 1000) * 0.37 - 150.25 + p * 1e-3 : Math.floor(offset + ((k * 2654435761) % span));
  }
  return a;
}

/** A ByteSource over `bytes` that records every read. */
export function countingSource(bytes: Uint8Array): ByteSource & { reads: { offset: number; length: number }[]; bytesRead(): number; reset(): void } {
  const inner = bytesSource(bytes);
  const reads: { offset: number; length: number }[] = [];
  return {
    size: inner.size,
    reads,
    read(offset, length) {
      reads.push({ offset, length });
      return inner.read(offset, length);
    },
    bytesRead: () => reads.reduce((s, r) => s + r.length, 0),
    reset: () => void reads.splice(0),
  };
}

/** File offset of the value field of `tag` in the directory at `ifd` (the entry must exist). */
export function tagValueAt(bytes: Uint8Array, ifd: number, tag: number, little = true, big = false): number {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = big ? Number(dv.getBigUint64(ifd, little)) : dv.getUint16(ifd, little);
  for (let k = 0; k < n; k++) {
    const at = ifd + (big ? 8 : 2) + k * (big ? 20 : 12);
    if (dv.getUint16(at, little) === tag) return at + (big ? 12 : 8);
  }
  throw new Error(`tag ${tag} not found`);
}

/** Writes `v` as a uint16 / uint32 at `at` (into a copy). */
export function patched(bytes: Uint8Array, at: number, v: number, size: 2 | 4 = 4, little = true): Uint8Array {
  const copy = bytes.slice();
  const dv = new DataView(copy.buffer);
  if (size === 2) dv.setUint16(at, v, little);
  else dv.setUint32(at, v, little);
  return copy;
}

/** A seeded random generator (mulberry32) for the fuzz tests. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
