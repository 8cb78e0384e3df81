/**
 * Which columns of a source table a map reads, checked against the table's columns and types, with
 * the messages people see when a map cannot be made of them. Pure module.
 */
import { isTextMethod, type AtlasMethod } from '@plexus/shared';
import { isNumericType } from '../data/guarded-duckdb.ts';
import { ProjectionError } from './projection.ts';

const fail = (message: string): never => {
  throw new ProjectionError(message);
};

export const isText = (type: string) => /^VARCHAR/i.test(type);

/** The columns the method reads, checked against the table (clear errors for people). */
export function pickColumns(spec: { method: AtlasMethod; columns: string[]; table: string }, all: Array<{ name: string; type: string }>): string[] {
  const { method, table } = spec;
  const byName = new Map(all.map((c) => [c.name, c.type]));
  const numeric = all.filter((c) => isNumericType(c.type)).map((c) => c.name);
  const listed = (names: string[]) => (names.length ? names.map((n) => `"${n}"`).join(', ') : 'none');
  // A column of that name hides DuckDB's row numbers, which a map's rows are.
  if (all.some((c) => c.name.toLowerCase() === 'rowid')) fail(`table "${table}" has a column named "${all.find((c) => c.name.toLowerCase() === 'rowid')!.name}", which hides its row numbers: rename that column and upload the table again`);
  for (const c of spec.columns) if (!byName.has(c)) fail(`table "${table}" has no column "${c}" (its columns: ${listed(all.map((x) => x.name))})`);
  if (isTextMethod(method)) {
    const map = method === 'tfidf' ? 'a TF-IDF map' : 'an embeddings map';
    const texts = all.filter((c) => isText(c.type)).map((c) => c.name);
    const col = spec.columns[0] ?? texts[0] ?? fail(`table "${table}" has no text column for ${map}`);
    if (!isText(byName.get(col)!)) fail(`column "${col}" is ${byName.get(col)}, not text: ${map} needs a text column (text columns here: ${listed(texts)})`);
    return [col];
  }
  const method_ = method === 'columns' ? 'a "columns" map' : method === 'pca' ? 'PCA' : 'UMAP';
  if (method === 'columns' && spec.columns.length !== 2) fail(`a "columns" map needs two columns, x and y (got ${spec.columns.length})`);
  const cols = spec.columns.length ? spec.columns : numeric;
  for (const c of cols) if (!isNumericType(byName.get(c)!)) fail(`column "${c}" is ${byName.get(c)}, not numeric: ${method_} uses numeric columns (numeric columns here: ${listed(numeric)})`);
  if (cols.length < 2) fail(`${method_} needs at least two numeric columns; table "${table}" has ${listed(numeric)}`);
  return cols;
}

