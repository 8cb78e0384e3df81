/**
 * Runtime validation of tool arguments against the JSON schemas the model is shown. Covers the
 * subset the tools use (object, array, string, number, integer, boolean, null, enum, required,
 * additionalProperties false, min/max, minLength/maxLength, minItems/maxItems, anyOf) and reports
 * every problem with its path, so the model can correct itself. Pure module.
 */

import type { Json, JsonObject } from '@plexus/shared';

type JsonType = 'object' | 'array' | 'string' | 'number' | 'integer' | 'boolean' | 'null';

export interface JsonSchema {
  readonly type?: JsonType | readonly JsonType[];
  readonly description?: string;
  readonly properties?: { readonly [k: string]: JsonSchema };
  readonly required?: readonly string[];
  readonly additionalProperties?: boolean | JsonSchema;
  readonly items?: JsonSchema;
  readonly enum?: readonly unknown[];
  readonly minimum?: number;
  readonly maximum?: number;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly minItems?: number;
  readonly maxItems?: number;
  readonly anyOf?: readonly JsonSchema[];
}

// The TypeScript type of the values a schema accepts, computed from the schema literal itself (the
// schemas are written `as const`), so a tool's argument type is never written twice.
type Primitive<T> = T extends 'string' ? string : T extends 'number' | 'integer' ? number : T extends 'boolean' ? boolean : T extends 'null' ? null
  : T extends 'array' ? Json[] : T extends 'object' ? JsonObject : never;
type RequiredKeys<S> = S extends { readonly required: readonly (infer R)[] } ? R : never;
type Flatten<T> = { [K in keyof T]: T[K] } & {};
type ObjectOf<S> = S extends { readonly properties: infer P }
  ? Flatten<{ -readonly [K in keyof P as K extends RequiredKeys<S> ? K : never]: FromSchema<P[K]> } & { -readonly [K in keyof P as K extends RequiredKeys<S> ? never : K]?: FromSchema<P[K]> }>
  : S extends { readonly additionalProperties: infer A extends JsonSchema } ? Record<string, FromSchema<A>> : JsonObject;
export type FromSchema<S> = S extends { readonly anyOf: readonly (infer A)[] } ? FromSchema<A>
  : S extends { readonly enum: readonly (infer E)[] } ? E
  : S extends { readonly type: 'object' } ? ObjectOf<S>
  : S extends { readonly type: 'array'; readonly items: infer I } ? FromSchema<I>[]
  : S extends { readonly type: readonly (infer T)[] } ? Primitive<T>
  : S extends { readonly type: infer T } ? Primitive<T>
  : Json;

function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function matchesType(v: unknown, t: string): boolean {
  const actual = typeOf(v);
  return actual === t || (t === 'number' && actual === 'integer');
}

/** Problems of `value` against `schema` (empty when valid). */
export function validate(schema: JsonSchema, value: unknown, path = 'arguments', out: string[] = []): string[] {
  if (out.length >= 20) return out;
  if (schema.anyOf) {
    const ok = schema.anyOf.some((s) => validate(s, value, path).length === 0);
    if (!ok) out.push(`${path}: does not match any allowed form`);
    return out;
  }
  if (schema.type) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!types.some((t) => matchesType(value, t))) {
      out.push(`${path}: expected ${types.join(' or ')}, got ${typeOf(value)}`);
      return out;
    }
  }
  if (schema.enum && !schema.enum.some((e) => e === value)) out.push(`${path}: must be one of ${schema.enum.map((e) => JSON.stringify(e)).join(', ')}`);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) out.push(`${path}: must be a finite number`);
    if (schema.minimum !== undefined && value < schema.minimum) out.push(`${path}: must be ≥ ${schema.minimum}`);
    if (schema.maximum !== undefined && value > schema.maximum) out.push(`${path}: must be ≤ ${schema.maximum}`);
  }
  if (typeof value === 'string') {
    if (schema.minLength !== undefined && value.length < schema.minLength) out.push(`${path}: must have at least ${schema.minLength} characters`);
    if (schema.maxLength !== undefined && value.length > schema.maxLength) out.push(`${path}: must have at most ${schema.maxLength} characters (has ${value.length})`);
  }
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems) out.push(`${path}: must have at least ${schema.minItems} items`);
    if (schema.maxItems !== undefined && value.length > schema.maxItems) out.push(`${path}: must have at most ${schema.maxItems} items (has ${value.length})`);
    if (schema.items) value.slice(0, 1000).forEach((v, i) => validate(schema.items!, v, `${path}[${i}]`, out));
  }
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const obj = value as Record<string, unknown>;
    for (const k of schema.required ?? []) if (obj[k] === undefined) out.push(`${path}.${k}: is required`);
    for (const [k, v] of Object.entries(obj)) {
      const prop = schema.properties?.[k];
      if (prop) validate(prop, v, `${path}.${k}`, out);
      else if (schema.additionalProperties === false) out.push(`${path}.${k}: is not a known argument (known: ${Object.keys(schema.properties ?? {}).join(', ') || 'none'})`);
      else if (schema.additionalProperties && typeof schema.additionalProperties === 'object') validate(schema.additionalProperties, v, `${path}.${k}`, out);
    }
  }
  return out;
}

/** Raised for arguments the model must fix; the message goes back to the model. */
export class ToolArgumentError extends Error {}

/**
 * Parses a tool call's raw argument string and validates it. Throws ToolArgumentError with every
 * problem listed.
 */
export function parseArguments<const S extends JsonSchema>(schema: S, raw: string): FromSchema<S> {
  let value: unknown;
  try {
    value = raw.trim() === '' ? {} : JSON.parse(raw);
  } catch (e) {
    throw new ToolArgumentError(`arguments are not valid JSON (${(e as Error).message}); send one JSON object`);
  }
  const problems = validate(schema, value);
  if (problems.length) throw new ToolArgumentError(`invalid arguments: ${problems.join('; ')}`);
  // The one place a value becomes its schema's type: `validate` has just checked it against S.
  return value as FromSchema<S>;
}
