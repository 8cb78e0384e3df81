/**
 * The binary points format of an atlas map: what `GET /api/workspaces/:id/atlas/:map/points`
 * answers (the server encodes it, server/src/atlas/atlas-tables.ts; the panel decodes it,
 * client/src/atlas/api.ts). The one description and the one implementation of the layout. Pure.
 *
 * | bytes | content |
 * |---|---|
 * | 0–3 | uint32 LE `n`: points sent |
 * | 4–7 | uint32 LE `metaLen` |
 * | 8 … 8+metaLen | UTF-8 JSON: `PointsMeta` (`bounds`, `color`, `total`, `sampled`) |
 * | … | zero padding up to a multiple of 4 |
 * | then | Float32 x[n], Float32 y[n], Uint32 row[n] and, when a colour was asked, Float32 color[n] |
 *
 * All numbers are little-endian. `row` is the 0-based row of the source table; `color` holds the
 * column's value (numeric) or the category's index (categorical), NaN when missing. A numeric
 * colour's `min`/`max` are `null` in the JSON when the column has no finite value (decoded as NaN).
 * `sampled` says whether the points are a sample of the map's `total` rows (the server sends every
 * row today: `sampled: false`). On a little-endian machine (every browser, x86 and ARM servers)
 * the decoded arrays are views on the buffer, with no copy.
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

/** What the encoder takes: the arrays (typed arrays are copied whole) and the metadata. */
export interface PointsInput {
  meta: PointsMeta;
  x: ArrayLike<number>;
  y: ArrayLike<number>;
  row: ArrayLike<number>;
  color?: ArrayLike<number> | null;
}

const HEADER = 8;
const pad4 = (n: number) => Math.ceil(n / 4) * 4;
const littleEndian = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** The byte offset of the arrays for metadata of `metaLen` bytes. */
export const pointsArraysStart = (metaLen: number): number => pad4(HEADER + metaLen);

/** Encodes points (the metadata's NaN min/max become null). Throws when the arrays' lengths differ, or a colour array and the metadata's colour do not go together. */
export function encodePoints(p: PointsInput): Uint8Array {
  const n = p.x.length;
  const arrays: Array<{ a: ArrayLike<number>; u32: boolean }> = [
    { a: p.x, u32: false },
    { a: p.y, u32: false },
    { a: p.row, u32: true },
    ...(p.color ? [{ a: p.color, u32: false }] : []),
  ];
  if (!p.color !== !p.meta.color) throw new Error(`points: a colour array needs a colour in the metadata, and the other way round (array: ${p.color ? 'yes' : 'no'}, metadata: ${p.meta.color ? 'yes' : 'no'})`);
  if (arrays.some(({ a }) => a.length !== n)) throw new Error(`points: x, y, row${p.color ? ' and color' : ''} must have the same length (${arrays.map(({ a }) => a.length).join(', ')})`);
  const meta = new TextEncoder().encode(JSON.stringify(p.meta));
  const start = pointsArraysStart(meta.length);
  const out = new Uint8Array(start + arrays.length * 4 * n);
  const dv = new DataView(out.buffer);
  dv.setUint32(0, n, true);
  dv.setUint32(4, meta.length, true);
  out.set(meta, HEADER);
  arrays.forEach(({ a, u32 }, k) => {
    const at = start + 4 * n * k;
    const typed = u32 ? a instanceof Uint32Array : a instanceof Float32Array;
    if (littleEndian && typed) {
      const t = a as Float32Array | Uint32Array;
      out.set(new Uint8Array(t.buffer, t.byteOffset, 4 * n), at);
    } else if (u32) for (let i = 0; i < n; i++) dv.setUint32(at + 4 * i, a[i]!, true);
    else for (let i = 0; i < n; i++) dv.setFloat32(at + 4 * i, a[i]!, true);
  });
  return out;
}

const num = (v: unknown): number => (v === null || v === undefined ? NaN : Number(v));

function readMeta(json: unknown): PointsMeta {
  if (!json || typeof json !== 'object' || Array.isArray(json)) throw new Error('points: the metadata is not an object');
  const m = json as Record<string, unknown>;
  const b = m.bounds;
  if (!Array.isArray(b) || b.length !== 4 || !b.every((v) => typeof v === 'number' && Number.isFinite(v))) throw new Error('points: bounds must be four finite numbers');
  let color: PointsColor | null = null;
  const c = m.color as Record<string, unknown> | null | undefined;
  if (c && typeof c === 'object') {
    const column = String(c.column ?? '');
    if (c.kind === 'numeric') color = { kind: 'numeric', column, min: num(c.min), max: num(c.max) };
    else if (c.kind === 'categorical') color = { kind: 'categorical', column, categories: Array.isArray(c.categories) ? c.categories.map((v) => String(v)) : [] };
    else throw new Error(`points: unknown colour kind ${JSON.stringify(c.kind)}`);
  }
  return { bounds: b as PointsMeta['bounds'], color, total: Number(m.total ?? 0), sampled: m.sampled === true };
}

/**
 * Decodes a points response (an ArrayBuffer, or bytes anywhere in one). Throws an Error that
 * names what is wrong with a malformed one (too short, metadata past the end or not JSON, bad
 * bounds, an unknown colour kind, fewer bytes than `n` points need).
 */
export function decodePoints(input: ArrayBuffer | Uint8Array): AtlasPoints {
  const bytes = input instanceof Uint8Array ? input : new Uint8Array(input);
  if (bytes.byteLength < HEADER) throw new Error(`points: ${bytes.byteLength} bytes is shorter than the header (${HEADER} bytes)`);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = dv.getUint32(0, true);
  const metaLen = dv.getUint32(4, true);
  if (HEADER + metaLen > bytes.byteLength) throw new Error(`points: metadata of ${metaLen} bytes runs past the end (${bytes.byteLength} bytes)`);
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(bytes.subarray(HEADER, HEADER + metaLen)));
  } catch (e) {
    throw new Error(`points: the metadata is not JSON (${(e as Error).message})`);
  }
  const meta = readMeta(json);
  const start = pointsArraysStart(metaLen);
  const arrays = meta.color ? 4 : 3;
  const need = start + arrays * 4 * n;
  if (bytes.byteLength < need) throw new Error(`points: ${n} points need ${need} bytes, the response has ${bytes.byteLength}`);
  // Views need 4-byte alignment in the underlying buffer; otherwise (or big-endian) copy.
  const view = littleEndian && (bytes.byteOffset + start) % 4 === 0;
  const at = (k: number) => start + 4 * n * k;
  const f32 = (k: number) => (view ? new Float32Array(bytes.buffer, bytes.byteOffset + at(k), n) : copy(new Float32Array(n), (i) => dv.getFloat32(at(k) + 4 * i, true)));
  const row = view ? new Uint32Array(bytes.buffer, bytes.byteOffset + at(2), n) : copy(new Uint32Array(n), (i) => dv.getUint32(at(2) + 4 * i, true));
  return { n, meta, x: f32(0), y: f32(1), row, color: meta.color ? f32(3) : null };
}

function copy<T extends Float32Array | Uint32Array>(out: T, get: (i: number) => number): T {
  for (let i = 0; i < out.length; i++) out[i] = get(i);
  return out;
}
