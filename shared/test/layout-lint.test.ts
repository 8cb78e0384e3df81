/**
 * The house rule that keeps the document's layout in one place: outside shared/, no code reads or
 * writes the workspace Y.Doc by raw keys — no `doc.getMap('…')`/`getArray`/`getText`/
 * `getXmlFragment`, no `doc.share`, no `.get/.set/.has/.delete('<a key the schema declares>')` —
 * only through the typed helpers of @plexus/shared (which the schema in shared/src/doc-schema
 * describes). Tests may build hostile documents by hand; application code may not.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import * as S from '../src/index.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SOURCE_DIRS = ['server/src', 'client/src', 'agent/src'];

function files(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...files(p));
    else if (/\.(ts|tsx|mts|mjs)$/.test(e.name) && !e.name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/** Every key and root name the schema declares. */
function schemaKeys(): Set<string> {
  const keys = new Set<string>(Object.keys(S.WORKSPACE_SCHEMA.roots));
  const walk = (n: S.Node): void => {
    if (n.kind === 'oneOf') return n.options.forEach(walk);
    if (n.kind === 'record') for (const [k, f] of Object.entries(n.fields)) (keys.add(k), walk(f.node));
    if (n.kind === 'dict') walk(n.entry.node);
    if (n.kind === 'list') walk(n.item);
  };
  Object.values(S.WORKSPACE_SCHEMA.roots).forEach(walk);
  return keys;
}

/** Raw layout access on one line, or null. Other Maps (URL parameters, headers, plain JS maps) use other keys or receivers. */
export function rawAccess(line: string, keys: Set<string>): string | null {
  const code = line.replace(/\/\/.*$/, '');
  if (/\bdoc\.(getMap|getArray|getText|getXmlFragment|getXmlElement)\s*[<(]/.test(code)) return 'a root by name';
  if (/\bdoc\.share\b/.test(code)) return 'doc.share';
  const m = /\.(get|set|has|delete)\(\s*['"]([A-Za-z_]+)['"]/.exec(code);
  if (m && keys.has(m[2]!) && !/(searchParams|headers|requestParameters|params|formData|dataset)\.(get|set|has|delete)\(/.test(code)) return `key '${m[2]}'`;
  return null;
}

describe('the document layout lives in shared/ only', () => {
  const keys = schemaKeys();

  it('the rule sees raw access (and not unrelated maps)', () => {
    expect(rawAccess("const ex = c.map.get('exec');", keys)).toBe("key 'exec'");
    expect(rawAccess("this.doc.getMap('cells')", keys)).toBe('a root by name');
    expect(rawAccess('isInside(type, doc.share.get(x))', keys)).toBe('doc.share');
    expect(rawAccess("url.searchParams.get('token')", keys)).toBeNull();
    expect(rawAccess("editor.getText({ blockSeparator: '\\n' })", keys)).toBeNull();
  });

  it('no application code outside shared/ reads or writes the workspace document by raw keys', () => {
    const found: string[] = [];
    for (const dir of SOURCE_DIRS)
      for (const f of files(path.join(root, dir))) {
        fs.readFileSync(f, 'utf8').split('\n').forEach((line, i) => {
          const what = rawAccess(line, keys);
          if (what) found.push(`${path.relative(root, f)}:${i + 1}: ${what}: ${line.trim()}`);
        });
      }
    expect(found).toEqual([]);
  });
});
