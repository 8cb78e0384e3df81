/**
 * JSON values (as Neuroglancer states, outputs and tool arguments hold them), with structural
 * equality and a guard. Pure module.
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** True when `v` is a plain JSON object (not an array, not null). */
export function isJsonObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * True when `v` is a JSON value exactly as zod's `z.json()` decides it (strings, finite numbers,
 * booleans, null, arrays of JSON values, plain objects whose own enumerable keys are strings with
 * JSON values; an own `__proto__` key is not looked at), without zod's union of six schemas tried
 * per value: the document schema checks every run output and viewer property with it, in about a
 * tenth of the time (bench/json-check.ts). Differentially tested against `z.json()` (json.test.ts).
 */
export function isJson(v: unknown): v is Json {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(v);
    case 'object':
      break;
    default:
      return false;
  }
  if (v === null) return true;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (!isJson(v[i])) return false;
    return true;
  }
  if (!isPlainObject(v)) return false;
  const o = v as Record<string, unknown>;
  for (const key of Object.keys(o)) if (key !== '__proto__' && !isJson(o[key])) return false;
  // An enumerable symbol key is not a string key: not JSON.
  for (const s of Object.getOwnPropertySymbols(o)) if (Object.prototype.propertyIsEnumerable.call(o, s)) return false;
  return true;
}

/** zod's notion of a plain object (its `util.isPlainObject`): no prototype, or one whose constructor is a realm's Object. */
function isPlainObject(o: object): boolean {
  const ctor = (o as { constructor?: unknown }).constructor;
  if (ctor === undefined || typeof ctor !== 'function') return true;
  const prot = (ctor as { prototype?: unknown }).prototype;
  if (typeof prot !== 'object' || prot === null || Array.isArray(prot)) return false;
  return Object.prototype.hasOwnProperty.call(prot, 'isPrototypeOf');
}

/** Structural equality of two JSON values; key order does not matter. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') {
    // NaN never appears in JSON; numbers compare by value.
    return false;
  }
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const ak = Object.keys(ao).filter((k) => ao[k] !== undefined);
  const bk = Object.keys(bo).filter((k) => bo[k] !== undefined);
  if (ak.length !== bk.length) return false;
  for (const k of ak) if (!Object.prototype.hasOwnProperty.call(bo, k) || !jsonEqual(ao[k], bo[k])) return false;
  return true;
}

/** A deep copy of a JSON value (drops `undefined` members, as JSON.stringify would). */
export function jsonClone<T extends Json>(v: T): T {
  return JSON.parse(JSON.stringify(v)) as T;
}
