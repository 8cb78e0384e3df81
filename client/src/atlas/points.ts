/**
 * The binary point format of `GET /api/workspaces/:id/atlas/:mapId/points` (pure, unit-tested):
 *
 * | bytes | content |
 * |---|---|
 * | 0–3 | uint32 LE `n` (points sent) |
 * | 4–7 | uint32 LE `metaLen` |
 * | 8… | `metaLen` bytes of UTF-8 JSON: `PointsMeta` |
 * | … | zero padding up to a multiple of 4 |
 * | | Float32Array x[n], Float32Array y[n], Uint32Array row[n], and (when a colour was asked) Float32Array color[n] |
 *
 * `color` holds the column's value (numeric) or the category index (categorical); NaN is missing.
 * The arrays are views on the response's buffer (no copy): little-endian, like every browser.
 */

export type PointsColor =
  | { kind: 'numeric'; column: string; min: number; max: number }
  | { kind: 'categorical'; column: string; categories: string[] };

export interface PointsMeta {
  /** [x0, y0, x1, y1] of the points, in map coordinates. */
  bounds: [number, number, number, number];
  color: PointsColor | null;
  /** Rows in the map (points may be a sample of them). */
  total: number;
  sampled: boolean;
}

export interface AtlasPoints {
  n: number;
  meta: PointsMeta;
  x: Float32Array;
  y: Float32Array;
  /** 0-based row of the source table of each point. */
  row: Uint32Array;
  color: Float32Array | null;
}

const HEADER = 8;
const pad4 = (n: number) => Math.ceil(n / 4) * 4;
const littleEndian = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

function readMeta(json: unknown): PointsMeta {
  if (!json || typeof json !== 'object') throw new Error('points: the metadata is not an object');
  const m = json as Record<string, unknown>;
  const b = m.bounds;
  if (!Array.isArray(b) || b.length !== 4 || !b.every((v) => typeof v === 'number' && Number.isFinite(v))) throw new Error('points: bounds must be four finite numbers');
  let color: PointsColor | null = null;
  const c = m.color as Record<string, unknown> | null | undefined;
  if (c && typeof c === 'object') {
    const column = String(c.column ?? '');
    if (c.kind === 'numeric') color = { kind: 'numeric', column, min: Number(c.min), max: Number(c.max) };
    else if (c.kind === 'categorical') color = { kind: 'categorical', column, categories: Array.isArray(c.categories) ? c.categories.map((v) => String(v)) : [] };
    else throw new Error(`points: unknown colour kind ${JSON.stringify(c.kind)}`);
  }
  return { bounds: b as PointsMeta['bounds'], color, total: Number(m.total ?? 0), sampled: m.sampled === true };
}

/** Parses a points response. Throws an Error naming what is wrong with a malformed one. */
export function parsePoints(buf: ArrayBuffer): AtlasPoints {
  if (buf.byteLength < HEADER) throw new Error(`points: ${buf.byteLength} bytes is shorter than the header`);
  const dv = new DataView(buf);
  const n = dv.getUint32(0, true);
  const metaLen = dv.getUint32(4, true);
  if (HEADER + metaLen > buf.byteLength) throw new Error(`points: metadata of ${metaLen} bytes runs past the end (${buf.byteLength} bytes)`);
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(new Uint8Array(buf, HEADER, metaLen)));
  } catch (e) {
    throw new Error(`points: the metadata is not JSON (${(e as Error).message})`);
  }
  const meta = readMeta(json);
  const start = pad4(HEADER + metaLen);
  const arrays = meta.color ? 4 : 3;
  const need = start + arrays * 4 * n;
  if (buf.byteLength < need) throw new Error(`points: ${n} points need ${need} bytes, the response has ${buf.byteLength}`);
  const f32 = (i: number) => (littleEndian ? new Float32Array(buf, start + i * 4 * n, n) : copyF32(dv, start + i * 4 * n, n));
  const x = f32(0);
  const y = f32(1);
  const row = littleEndian ? new Uint32Array(buf, start + 8 * n, n) : copyU32(dv, start + 8 * n, n);
  const color = meta.color ? f32(3) : null;
  return { n, meta, x, y, row, color };
}

function copyF32(dv: DataView, at: number, n: number): Float32Array {
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = dv.getFloat32(at + i * 4, true);
  return out;
}
function copyU32(dv: DataView, at: number, n: number): Uint32Array {
  const out = new Uint32Array(n);
  for (let i = 0; i < n; i++) out[i] = dv.getUint32(at + i * 4, true);
  return out;
}

/** Encodes points in the same format (the parser's round-trip tests; the server has its own encoder, server/src/atlas/atlas-tables.ts). */
export function encodePoints(p: { meta: PointsMeta; x: ArrayLike<number>; y: ArrayLike<number>; row: ArrayLike<number>; color?: ArrayLike<number> | null }): ArrayBuffer {
  const n = p.x.length;
  const meta = new TextEncoder().encode(JSON.stringify(p.meta));
  const start = pad4(HEADER + meta.length);
  const arrays = p.color ? 4 : 3;
  const buf = new ArrayBuffer(start + arrays * 4 * n);
  const dv = new DataView(buf);
  dv.setUint32(0, n, true);
  dv.setUint32(4, meta.length, true);
  new Uint8Array(buf, HEADER, meta.length).set(meta);
  for (let i = 0; i < n; i++) {
    dv.setFloat32(start + i * 4, p.x[i]!, true);
    dv.setFloat32(start + 4 * n + i * 4, p.y[i]!, true);
    dv.setUint32(start + 8 * n + i * 4, p.row[i]!, true);
    if (p.color) dv.setFloat32(start + 12 * n + i * 4, p.color[i]!, true);
  }
  return buf;
}

/** Index of each row in the points (−1 where a row was not sent), for looking points up by row. */
export function rowIndex(points: Pick<AtlasPoints, 'n' | 'row'>): Int32Array {
  let max = -1;
  for (let i = 0; i < points.n; i++) if (points.row[i]! > max) max = points.row[i]!;
  const idx = new Int32Array(max + 1).fill(-1);
  for (let i = 0; i < points.n; i++) idx[points.row[i]!] = i;
  return idx;
}
