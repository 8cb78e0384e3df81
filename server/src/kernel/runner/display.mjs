/**
 * Rich display of a cell's value, computed inside the sandboxed runner (never on the server):
 * tables for arrays of objects, JSON trees for other objects, text for scalars, charts and images
 * for the values the cell helpers (`vegalite`, `plot`, `image`) mark. Every output is size-capped;
 * the full rows/value travel separately (`full`) so the supervisor can keep them server-side.
 * Pure module.
 */

export const PREVIEW_ROWS = 50;
export const MAX_INLINE_JSON = 48 * 1024;
export const MAX_FULL_ROWS = 100_000;
export const MAX_TEXT = 32 * 1024;
const MARK = Symbol.for('plexus.display');

const tag = (v) => Object.prototype.toString.call(v).slice(8, -1);

/** Marks a value for a particular display (used by the cell helpers). */
export const marked = (kind, payload) => ({ [MARK]: kind, ...payload });

/** A JSON-safe copy of `v` (depth- and breadth-limited); `state.truncated` tells whether anything was cut. */
export function toJson(v, state = { truncated: false }, depth = 0, seen = new Set()) {
  if (v === null || v === undefined) return null;
  switch (typeof v) {
    case 'number':
      return Number.isFinite(v) ? v : String(v);
    case 'string':
      if (v.length > 2000) {
        state.truncated = true;
        return v.slice(0, 2000) + '…';
      }
      return v;
    case 'boolean':
      return v;
    case 'bigint':
      return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
    case 'function':
      return `ƒ ${v.name || '(anonymous)'}()`;
    case 'symbol':
      return v.toString();
  }
  if (seen.has(v)) return '[circular]';
  const t = tag(v);
  if (t === 'Date') return Number.isNaN(v.getTime()) ? 'Invalid Date' : v.toISOString();
  if (t === 'Error' || v instanceof Error) return `${v.name}: ${v.message}`;
  if (depth >= 8) {
    state.truncated = true;
    return Array.isArray(v) ? `[Array(${v.length})]` : '[Object]';
  }
  seen.add(v);
  try {
    if (ArrayBuffer.isView(v)) v = Array.from(v.length > 1000 ? v.subarray(0, 1000) : v);
    if (t === 'Map') v = Object.fromEntries([...v.entries()].slice(0, 1000).map(([k, x]) => [String(k), x]));
    if (t === 'Set') v = [...v].slice(0, 1000);
    if (Array.isArray(v)) {
      const n = Math.min(v.length, 1000);
      if (v.length > n) state.truncated = true;
      const out = [];
      for (let i = 0; i < n; i++) out.push(toJson(v[i], state, depth + 1, seen));
      return out;
    }
    const out = {};
    let i = 0;
    for (const k of Object.keys(v)) {
      if (i++ >= 1000) {
        state.truncated = true;
        break;
      }
      out[k] = toJson(v[k], state, depth + 1, seen);
    }
    return out;
  } finally {
    seen.delete(v);
  }
}

function cellValue(v) {
  if (v === null || v === undefined) return null;
  if (typeof v === 'bigint') return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
  if (typeof v === 'number') return Number.isFinite(v) ? v : String(v);
  if (typeof v === 'string') return v.length > 500 ? v.slice(0, 500) + '…' : v;
  if (typeof v === 'boolean') return v;
  if (tag(v) === 'Date') return Number.isNaN(v.getTime()) ? null : v.toISOString();
  const s = JSON.stringify(toJson(v));
  return s && s.length > 500 ? s.slice(0, 500) + '…' : s;
}

function typeName(v) {
  if (v === null || v === undefined) return null;
  if (typeof v === 'object') return tag(v) === 'Date' ? 'date' : Array.isArray(v) ? 'array' : 'object';
  return typeof v;
}

const isRecord = (r) => r !== null && typeof r === 'object' && !Array.isArray(r) && tag(r) === 'Object';

/** True for arrays of plain objects (shown as tables). */
export const isTable = (v) => Array.isArray(v) && v.length > 0 && v.length === v.filter(isRecord).length;

/** A table output for rows (arrays of plain objects or SQL results); `columns` may be given (SQL types). */
export function tableOutput(rows, columns) {
  if (!columns) {
    const names = [];
    const types = new Map();
    for (const r of rows.slice(0, 1000)) {
      for (const k of Object.keys(r)) {
        if (!types.has(k)) names.push(k), types.set(k, null);
        if (types.get(k) === null) types.set(k, typeName(r[k]));
      }
    }
    columns = names.map((name) => ({ name, type: types.get(name) ?? 'null' }));
  }
  const conv = (r) => Object.fromEntries(columns.map((c) => [c.name, cellValue(r[c.name])]));
  const output = { type: 'table', columns, rows: rows.slice(0, PREVIEW_ROWS).map(conv), totalRows: rows.length };
  const full = rows.length > PREVIEW_ROWS ? { columns, rows: rows.slice(0, MAX_FULL_ROWS).map(conv), totalRows: rows.length } : undefined;
  return { output, full };
}

/** Outputs for the value of a cell's last expression: `{ outputs, full? }`. */
export function display(v) {
  if (v === undefined) return { outputs: [] };
  if (v && typeof v === 'object' && v[MARK]) {
    const kind = v[MARK];
    if (kind === 'chart') {
      const state = { truncated: false };
      const spec = toJson(v.spec, state);
      const size = JSON.stringify(spec).length;
      if (size <= MAX_INLINE_JSON) return { outputs: [{ type: 'chart', format: v.format, spec }] };
      return { outputs: [{ type: 'chart', format: v.format, spec: null }], full: { spec } };
    }
    if (kind === 'image') {
      if (typeof v.data === 'string' && v.data.length <= MAX_INLINE_JSON) return { outputs: [{ type: 'image', mime: v.mime, data: v.data, width: v.width, height: v.height }] };
      return { outputs: [{ type: 'image', mime: v.mime, width: v.width, height: v.height }], full: { mime: v.mime, data: String(v.data ?? '') } };
    }
    if (kind === 'table') return wrap(tableOutput(v.rows, v.columns));
  }
  if (v instanceof Error || tag(v) === 'Error') return { outputs: [{ type: 'error', name: v.name ?? 'Error', message: String(v.message ?? v) }] };
  if (typeof v === 'string') return { outputs: [{ type: 'text', text: v.length > MAX_TEXT ? v.slice(0, MAX_TEXT) : v, ...(v.length > MAX_TEXT ? { truncated: true } : {}) }] };
  if (typeof v !== 'object' || tag(v) === 'Date') {
    const j = toJson(v);
    return { outputs: [{ type: 'text', text: typeof j === 'string' ? j : String(j) }] };
  }
  if (isTable(v)) return wrap(tableOutput(v));
  const state = { truncated: false };
  const value = toJson(v, state);
  const s = JSON.stringify(value);
  if (s.length <= MAX_INLINE_JSON && !state.truncated) return { outputs: [{ type: 'json', value }] };
  // Too large for the document: a shallow preview inline, the whole (JSON-safe) value server-side.
  const pstate = { truncated: false };
  const preview = toJson(v, pstate, 6);
  const ok = JSON.stringify(preview).length <= MAX_INLINE_JSON;
  return { outputs: [{ type: 'json', value: ok ? preview : null, truncated: true }], full: { value } };
}

function wrap({ output, full }) {
  return { outputs: [output], full };
}
