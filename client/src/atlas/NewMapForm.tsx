/**
 * The form that makes a map: a table of the workspace, how to place its rows (two columns as
 * x/y, PCA or UMAP of numeric columns, TF-IDF of a text column computed locally, or — when the
 * server has an embedding service — the embeddings of a text column; methods.ts), a colour-by
 * column and a title. Creating writes the map into the document (createAtlasMap); the server
 * computes the coordinates. Effects: one document write; reads the server's configuration.
 */
import { useEffect, useMemo, useState, type FormEvent } from 'react';
import { createAtlasMap, isTextMethod, type AtlasMethod, type TableColumn } from '@plexus/shared';
import { useServerConfig } from '../api/server-config.ts';
import { useApiToken } from '../api/tokenContext.ts';
import { useSession } from '../collab/context.tsx';
import { useTables } from '../data/useTables.ts';
import { mapMethods, NO_EMBEDDINGS_NOTE } from './methods.ts';

export const isNumericType = (type: string): boolean => /^(TINYINT|SMALLINT|INTEGER|INT|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|UHUGEINT|FLOAT|REAL|DOUBLE|DECIMAL|NUMERIC)\b/i.test(type.trim());
export const isTextType = (type: string): boolean => /^(VARCHAR|TEXT|STRING|CHAR|BPCHAR)\b/i.test(type.trim());

export function NewMapForm({ onCreated, onCancel }: { onCreated(id: string): void; onCancel?: () => void }) {
  const session = useSession();
  const server = useServerConfig(useApiToken());
  const methods = useMemo(() => mapMethods(server?.atlas ?? null), [server]);
  const tables = useTables(session.doc);
  const [tableName, setTableName] = useState(tables[0]?.name ?? '');
  const table = tables.find((t) => t.name === tableName) ?? null;
  const [method, setMethod] = useState<AtlasMethod>('pca');
  // Keyed by the columns' text: the table list is rebuilt on every change to the data registry.
  const colKey = JSON.stringify(table?.columns ?? []);
  const numeric = useMemo(() => (JSON.parse(colKey) as TableColumn[]).filter((c) => isNumericType(c.type)), [colKey]);
  const text = useMemo(() => (JSON.parse(colKey) as TableColumn[]).filter((c) => isTextType(c.type)), [colKey]);
  const [picked, setPicked] = useState<string[]>([]);
  const [xCol, setXCol] = useState('');
  const [yCol, setYCol] = useState('');
  const [textCol, setTextCol] = useState('');
  const [colorBy, setColorBy] = useState('');
  const [title, setTitle] = useState('');

  // A table arrives (upload) or changes: sensible defaults for its columns.
  useEffect(() => {
    if (!table && tables[0]) setTableName(tables[0].name);
  }, [table, tables]);
  useEffect(() => {
    setPicked(numeric.map((c) => c.name));
    setXCol(numeric[0]?.name ?? '');
    setYCol(numeric[1]?.name ?? numeric[0]?.name ?? '');
    setTextCol(text[0]?.name ?? '');
    setColorBy('');
    setMethod((m) => (numeric.length < 2 && text.length ? 'tfidf' : isTextMethod(m) && !text.length ? 'pca' : m));
  }, [tableName, numeric, text]);
  const chosen = methods.find((m) => m.value === method) ?? { value: method, label: method, hint: '' };

  const columns = method === 'columns' ? [xCol, yCol] : isTextMethod(method) ? [textCol] : picked;
  const problem = !table
    ? 'Upload a table first (Data → Upload…, or drop a CSV on the notebook).'
    : method === 'columns'
      ? !xCol || !yCol
        ? 'Choose two numeric columns.'
        : xCol === yCol
          ? 'Choose two different columns.'
          : null
      : isTextMethod(method)
        ? !textCol
          ? 'This table has no text column.'
          : null
        : picked.length < 2
          ? 'Choose at least two numeric columns.'
          : null;

  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (problem || !table) return;
    const id = createAtlasMap(
      session.doc,
      { table: table.name, method, columns, title: title.trim() || `${table.name} · ${chosen.label}`, colorBy: colorBy || null },
      { id: session.origin.userId },
      session.origin,
    );
    onCreated(id);
  };

  const toggle = (name: string) => setPicked((p) => (p.includes(name) ? p.filter((c) => c !== name) : [...p, name]));
  const columnOption = (c: TableColumn) => (
    <option key={c.name} value={c.name}>
      {c.name} ({c.type})
    </option>
  );

  return (
    <form className="atlas-form" data-testid="atlas-form" onSubmit={submit} aria-label="New map">
      <h3 className="atlas-form-title">New map</h3>
      {tables.length === 0 ? (
        <p className="muted" data-testid="atlas-form-no-tables">
          No tables yet: upload a CSV, TSV, Parquet or JSON file (Data → Upload…, or drop it on the notebook), then map it here.
        </p>
      ) : (
        <>
          <label className="atlas-field">
            <span>Table</span>
            <select data-testid="atlas-form-table" value={tableName} onChange={(e) => setTableName(e.target.value)}>
              {tables.map((t) => (
                <option key={t.name} value={t.name}>
                  {t.name} ({t.rows.toLocaleString()} rows)
                </option>
              ))}
            </select>
          </label>
          <fieldset className="atlas-field atlas-methods">
            <legend>Place the rows by</legend>
            {methods.map((m) => (
              <label key={m.value} title={m.hint} className="atlas-method">
                <input type="radio" name="atlas-method" value={m.value} data-testid={`atlas-form-method-${m.value}`} checked={method === m.value} onChange={() => setMethod(m.value)} disabled={isTextMethod(m.value) ? !text.length : numeric.length < (m.value === 'columns' ? 1 : 2)} />
                {m.label}
              </label>
            ))}
            <p className="muted atlas-hint" data-testid="atlas-form-hint">{chosen.hint}</p>
            {method === 'tfidf' && server && !server.atlas.embeddings && (
              <p className="muted atlas-hint" data-testid="atlas-form-no-embeddings">
                {NO_EMBEDDINGS_NOTE}
              </p>
            )}
          </fieldset>
          {method === 'columns' && (
            <div className="atlas-field atlas-xy">
              <label>
                <span>x</span>
                <select data-testid="atlas-form-x" value={xCol} onChange={(e) => setXCol(e.target.value)}>
                  {numeric.map(columnOption)}
                </select>
              </label>
              <label>
                <span>y</span>
                <select data-testid="atlas-form-y" value={yCol} onChange={(e) => setYCol(e.target.value)}>
                  {numeric.map(columnOption)}
                </select>
              </label>
            </div>
          )}
          {(method === 'pca' || method === 'umap') && (
            <fieldset className="atlas-field">
              <legend>
                Numeric columns ({picked.length} of {numeric.length})
              </legend>
              <div className="atlas-columns" data-testid="atlas-form-columns">
                {numeric.map((c) => (
                  <label key={c.name} className="atlas-column">
                    <input type="checkbox" data-testid="atlas-form-column" value={c.name} checked={picked.includes(c.name)} onChange={() => toggle(c.name)} />
                    {c.name}
                  </label>
                ))}
                {numeric.length === 0 && <span className="muted">This table has no numeric columns.</span>}
              </div>
            </fieldset>
          )}
          {isTextMethod(method) && (
            <label className="atlas-field">
              <span>Text column</span>
              <select data-testid="atlas-form-text" value={textCol} onChange={(e) => setTextCol(e.target.value)}>
                {text.map(columnOption)}
              </select>
            </label>
          )}
          <label className="atlas-field">
            <span>Colour by</span>
            <select data-testid="atlas-form-color" value={colorBy} onChange={(e) => setColorBy(e.target.value)}>
              <option value="">(none)</option>
              {(table?.columns ?? []).map(columnOption)}
            </select>
          </label>
          <label className="atlas-field">
            <span>Title</span>
            <input type="text" data-testid="atlas-form-title" placeholder={table ? `${table.name} · ${chosen.label}` : ''} value={title} maxLength={200} onChange={(e) => setTitle(e.target.value)} />
          </label>
        </>
      )}
      <div className="atlas-form-actions">
        {problem && tables.length > 0 && (
          <span className="muted atlas-problem" role="status">
            {problem}
          </span>
        )}
        {onCancel && (
          <button type="button" className="btn btn-small" onClick={onCancel}>
            Cancel
          </button>
        )}
        <button type="submit" className="btn btn-small btn-primary" data-testid="atlas-form-create" disabled={!!problem}>
          Make the map
        </button>
      </div>
    </form>
  );
}
