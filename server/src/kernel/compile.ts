/**
 * Turns a JavaScript cell into the script the runner executes: an async function (so top-level
 * `await` works) whose parameters are the cell's inputs and which returns its top-level
 * definitions; static imports become loads of the curated libraries; the last expression becomes
 * the display value. Line numbers are preserved (the header shares line 1 with the cell), so
 * errors point at the cell's own lines. Pure module.
 */
import type { CellAnalysis } from '@plexus/shared';

export interface CompiledCell {
  code: string;
  /** Characters the header adds before the cell's first line. */
  headerLength: number;
  /** Column corrections: on `line`, compiled columns from `column` on are `by` characters to the right of the source's. */
  shifts: Array<{ line: number; column: number; by: number }>;
}

/** 1-based line and 0-based column of an offset. */
function lineCol(source: string, offset: number): { line: number; column: number } {
  const before = source.slice(0, offset);
  const nl = before.lastIndexOf('\n');
  return { line: before.split('\n').length, column: offset - (nl + 1) };
}

const ident = (s: string) => /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(s);

/** Compiles `source` (already analysed, without a syntax error) with the given inputs. */
export function compileJsCell(source: string, a: CellAnalysis, inputs: readonly string[]): CompiledCell {
  const edits: Array<{ start: number; end: number; text: string }> = [];
  for (const imp of a.imports ?? []) {
    const ns = imp.bindings.find((b) => b.imported === '*');
    const named = imp.bindings.filter((b) => b.imported !== '*');
    const load = `await __plexus.import(${JSON.stringify(imp.source)})`;
    const parts: string[] = [];
    if (ns) parts.push(`const ${ns.local} = ${load};`);
    if (named.length) {
      const pattern = named.map((b) => (b.imported === b.local ? b.local : `${ident(b.imported) ? b.imported : JSON.stringify(b.imported)}: ${b.local}`)).join(', ');
      parts.push(`const { ${pattern} } = ${ns ? ns.local : load};`);
    }
    if (!parts.length) parts.push(`${load};`);
    // Keep the line count: a multi-line import is replaced by one line plus the newlines it had.
    const newlines = source.slice(imp.start, imp.end).split('\n').length - 1;
    edits.push({ start: imp.start, end: imp.end, text: parts.join(' ') + '\n'.repeat(newlines) });
  }
  const shifts: CompiledCell['shifts'] = [];
  if (a.lastExpression) {
    const at = lineCol(source, a.lastExpression.start);
    shifts.push({ line: at.line, column: at.column, by: '__plexus.last = ('.length });
    edits.push({ start: a.lastExpression.start, end: a.lastExpression.start, text: '__plexus.last = (' });
    edits.push({ start: a.lastExpression.end, end: a.lastExpression.end, text: ')' });
  }
  edits.sort((x, y) => y.start - x.start || y.end - x.end);
  let body = source;
  for (const e of edits) body = body.slice(0, e.start) + e.text + body.slice(e.end);
  const header = `(async function (__plexus${inputs.map((n) => `, ${n}`).join('')}) { 'use strict'; `;
  const footer = `\n;return { defs: { ${a.defs.join(', ')} } };\n}).apply(undefined, __plexusArgs)`;
  for (const sh of shifts) if (sh.line === 1) sh.column += header.length;
  shifts.unshift({ line: 1, column: 0, by: header.length });
  return { code: header + body + footer, headerLength: header.length, shifts };
}
