/**
 * The vocabulary of the workspace document's schema: nodes that describe what a root, a record or
 * a value may be, and fields that say who may write them. `workspace-schema.ts` uses it to declare
 * the whole document in one place; `check.ts` enforces it on every incoming update and on whole
 * documents. Pure module.
 *
 * Nodes mirror the Yjs types the document uses:
 * - `json`: a plain value (Yjs ContentAny), checked by a zod schema;
 * - `record`: a Y.Map with known keys (each a `Field`), optionally open to `extra` keys;
 * - `dict`: a Y.Map used as a dictionary (ids or names → one kind of entry);
 * - `list`: a Y.Array of one kind of item;
 * - `text`: a plain Y.Text (strings only: no embeds, no formatting);
 * - `richtext`: a Y.XmlFragment edited by a rich-text editor (elements, text with marks);
 * - `oneOf`: any of several nodes (e.g. a cell's source is text or rich text).
 *
 * Writers: every update is checked against the writer that sent it — a `person` (owner or editor
 * tokens), the `agent`, the `kernel` (both service tokens) or the `server` itself (in-process
 * writes: seeding, migrations, imports, uploads; trusted, never checked at run time).
 */
import type { z } from 'zod';

export const WRITERS = ['person', 'agent', 'kernel', 'server'] as const;
export type Writer = (typeof WRITERS)[number];
export type Writers = readonly Writer[];

/** Anyone who may edit the workspace. */
export const ANYONE: Writers = ['person', 'agent', 'kernel', 'server'];
/** People and the agent (the collaborators who author content). */
export const COLLABORATORS: Writers = ['person', 'agent', 'server'];
export const PEOPLE: Writers = ['person', 'server'];
export const AGENT: Writers = ['agent', 'server'];
export const KERNEL: Writers = ['kernel', 'server'];
export const SERVER: Writers = ['server'];
/** Set when the record is created, never changed afterwards. */
export const NOBODY: Writers = [];

/** Extra, writer-dependent check of a value; returns a problem or null. */
export type ValueCheck = (value: unknown, writer: Writer) => string | null;

export interface JsonNode {
  kind: 'json';
  /** What the value is, for messages ("a run request"). */
  what: string;
  schema: z.ZodType;
}
export interface RecordNode {
  kind: 'record';
  what: string;
  fields: Readonly<Record<string, Field>>;
  /** Keys not listed in `fields` (open records such as the viewer's top-level state). */
  extra?: Field;
}
export interface DictNode {
  kind: 'dict';
  what: string;
  /** Which keys are allowed. */
  key: z.ZodType<string>;
  entry: Field;
}
export interface ListNode {
  kind: 'list';
  what: string;
  item: Node;
  /** Who may insert items into an existing list, and who may remove them. */
  insert: Writers;
  remove: Writers;
}
export interface TextNode {
  kind: 'text';
  what: string;
}
export interface RichTextNode {
  kind: 'richtext';
  what: string;
}
export interface OneOfNode {
  kind: 'oneOf';
  what: string;
  options: readonly Node[];
}
export type Node = JsonNode | RecordNode | DictNode | ListNode | TextNode | RichTextNode | OneOfNode;

export interface Field {
  node: Node;
  /**
   * Who may set, replace or delete this key on an existing record, and edit inside its value when
   * it is text (typing). Nested records have their own fields.
   */
  write: Writers;
  /** Who may delete it (default: `write`). */
  remove?: Writers;
  /** Who may include it when the record is created (default: whoever may create the record). */
  create?: Writers;
  /** The record is invalid without it. */
  required?: boolean;
  /** A check that depends on the writer (e.g. only the agent may author as the agent). */
  check?: ValueCheck;
}

/** The whole document: its roots by name. */
export interface DocSchema {
  roots: Readonly<Record<string, RecordNode | DictNode | ListNode>>;
}

// Constructors (keep declarations short and uniform).
export const json = (what: string, schema: z.ZodType): JsonNode => ({ kind: 'json', what, schema });
export const record = (what: string, fields: Record<string, Field>, extra?: Field): RecordNode => ({ kind: 'record', what, fields, extra });
export const dict = (what: string, key: z.ZodType<string>, entry: Field): DictNode => ({ kind: 'dict', what, key, entry });
export const list = (what: string, item: Node, rules: { insert: Writers; remove: Writers }): ListNode => ({ kind: 'list', what, item, ...rules });
export const text = (what: string): TextNode => ({ kind: 'text', what });
export const richText = (what: string): RichTextNode => ({ kind: 'richtext', what });
export const oneOf = (what: string, ...options: Node[]): OneOfNode => ({ kind: 'oneOf', what, options });
export const field = (node: Node, write: Writers, more: Omit<Field, 'node' | 'write'> = {}): Field => ({ node, write, ...more });

/** The writer a transaction origin stands for (see origin.ts), or null when it is not ours. */
export function writerOfOrigin(o: unknown): Writer | null {
  const kind = o && typeof o === 'object' ? (o as { kind?: unknown }).kind : undefined;
  switch (kind) {
    case 'user':
      return 'person';
    case 'agent':
    case 'kernel':
    case 'server':
      return kind;
    default:
      return null;
  }
}

/** The writer a token stands for: its role and subject (viewers write nothing). */
export function writerOfToken(claims: { role: string; sub: string }): Writer | null {
  if (claims.role === 'viewer') return null;
  if (claims.role === 'service') {
    if (claims.sub === 'service:kernel') return 'kernel';
    if (claims.sub === 'service:agent') return 'agent';
  }
  return 'person';
}
