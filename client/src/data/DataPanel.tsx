/**
 * The data panel (a collapsible section above the notebook): every uploaded table for everyone
 * (name, columns and types, rows, size, uploader) with a paged preview; for editors a file
 * picker, the uploads in progress (progress bar, cancel, the server's error) and delete; below
 * them the method library (library/LibrarySection.tsx).
 * Effects: network (previews, uploads, delete).
 */
import { useEffect, useRef, useState } from 'react';
import { DATA_SELECTION_FIELD, type DataTable, type Json } from '@plexus/shared';
import { fetchPreview, deleteTable, type RowsPage } from '../api/notebook.ts';
import { useApiToken } from '../api/tokenContext.ts';
import { useCanEdit, useSession } from '../collab/context.tsx';
import type { WorkspaceSession } from '../collab/session.ts';
import { Pager, PAGE_ROWS, RowsTable } from '../notebook/outputs/TableOutput.tsx';
import { UPLOAD_ACCEPT, useUploads } from './uploads.ts';
import { useTables } from './useTables.ts';
import { UploadList } from './UploadList.tsx';
import { useAgentUi } from '../agent/agentUi.ts';
import { clickRow, EMPTY_SELECTION, selectionField, type RowSelection } from './rowSelection.ts';
import { LibrarySection } from '../library/LibrarySection.tsx';

/** "1.2 MB". Pure. */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/** The table whose rows the local awareness currently publishes as selected, if any. */
const publishedTable = (session: WorkspaceSession): string | undefined =>
  ((session.awareness.getLocalState() as Record<string, unknown> | null)?.[DATA_SELECTION_FIELD] as { table?: string } | null | undefined)?.table;

function Preview({ table }: { table: DataTable }) {
  const token = useApiToken();
  const session = useSession();
  const [offset, setOffset] = useState(0);
  const [page, setPage] = useState<RowsPage | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const ctl = new AbortController();
    setError(null);
    fetchPreview(token, session.workspace.id, table.name, offset, PAGE_ROWS, ctl.signal).then(setPage, (e: Error) => e.name !== 'AbortError' && setError(e.message));
    return () => ctl.abort();
  }, [token, session, table.name, table.created, offset]);
  const current = page && page.offset === offset ? page : null;

  // Selected rows go to the awareness (the agent reads the asker's), with the values of rows seen.
  const [selection, setSelection] = useState<RowSelection>(EMPTY_SELECTION);
  const known = useRef(new Map<number, Record<string, Json>>());
  useEffect(() => {
    if (current) current.rows.forEach((r, i) => known.current.set(current.offset + i, r));
  }, [current]);
  useEffect(() => {
    const field = selectionField(table.name, selection, known.current);
    if (field || publishedTable(session) === table.name) session.awareness.setLocalStateField(DATA_SELECTION_FIELD, field);
  }, [session, table.name, selection]);
  // Closing the preview clears what this preview published (another one may have published since).
  useEffect(
    () => () => {
      if (publishedTable(session) === table.name) session.awareness.setLocalStateField(DATA_SELECTION_FIELD, null);
    },
    [session, table.name],
  );

  return (
    <div className="data-preview" data-testid="data-preview">
      <Pager offset={offset} shown={current?.rows.length ?? 0} total={current?.totalRows ?? table.rows} canPage loading={!current && !error} onOffset={setOffset} />
      {selection.rows.size > 0 && (
        <span className="muted data-selected" data-testid="data-selected">
          {selection.rows.size} selected{' '}
          <button className="link-btn" onClick={() => setSelection(EMPTY_SELECTION)}>
            clear
          </button>
        </span>
      )}
      {error && <div className="out-error">{error}</div>}
      {current && (
        <RowsTable
          columns={current.columns}
          rows={current.rows}
          selection={{ offset: current.offset, selected: selection.rows, onRowClick: (row, e) => setSelection((s) => clickRow(s, row, e)) }}
        />
      )}
    </div>
  );
}

function TableRow({ table, canEdit }: { table: DataTable; canEdit: boolean }) {
  const token = useApiToken();
  const session = useSession();
  const [open, setOpen] = useState(false);
  const [error, setError] = useState<string | null>(null);
  // A chat button asked to show this table.
  const openRequest = useAgentUi((s) => s.openTable);
  const rowRef = useRef<HTMLLIElement>(null);
  useEffect(() => {
    if (openRequest?.target !== table.name) return;
    setOpen(true);
    rowRef.current?.scrollIntoView({ block: 'nearest' });
  }, [openRequest, table.name]);
  const remove = () => {
    if (!window.confirm(`Delete the table "${table.name}" for everyone?`)) return;
    deleteTable(token, session.workspace.id, table.name).catch((e: Error) => setError(e.message));
  };
  return (
    <li className="data-table" data-testid="data-table" data-name={table.name} ref={rowRef}>
      <div className="data-table-head">
        <button className="link-btn data-name" data-testid="data-table-open" aria-expanded={open} onClick={() => setOpen(!open)}>
          {open ? '▾' : '▸'} {table.name}
        </button>
        <span className="muted" data-testid="data-table-rows">
          {table.rows.toLocaleString()} rows · {formatBytes(table.bytes)} · {table.format} · by {table.uploadedBy.name ?? table.uploadedBy.id}
        </span>
        {canEdit && (
          <button className="icon-btn danger" data-testid="data-delete" title={`Delete ${table.name}`} aria-label={`Delete ${table.name}`} onClick={remove}>
            ✕
          </button>
        )}
      </div>
      <div className="data-columns" data-testid="data-columns">
        {table.columns.map((c) => (
          <span key={c.name} className="data-column">
            {c.name} <span className="col-type">{c.type}</span>
          </span>
        ))}
      </div>
      {error && <div className="out-error">{error}</div>}
      {open && <Preview table={table} />}
    </li>
  );
}

export function DataPanel() {
  const session = useSession();
  const token = useApiToken();
  const canEdit = useCanEdit();
  const tables = useTables(session.doc);
  const start = useUploads((s) => s.start);
  return (
    <section className="data-panel" data-testid="data-panel" aria-label="Data">
      <div className="data-panel-head">
        <strong>Data</strong>
        <span className="muted">Tables SQL cells can query by name{canEdit ? '. Drop CSV, TSV, Parquet or JSON files anywhere on the notebook.' : '.'}</span>
        {canEdit && (
          <label className="btn btn-small">
            Upload…
            <input
              type="file"
              hidden
              multiple
              accept={UPLOAD_ACCEPT}
              data-testid="data-file-input"
              onChange={(e) => {
                for (const f of e.target.files ?? []) start(token, session.workspace.id, f);
                e.target.value = '';
              }}
            />
          </label>
        )}
      </div>
      <UploadList />
      {tables.length === 0 ? (
        <div className="muted" data-testid="data-empty">
          No tables yet.
        </div>
      ) : (
        <ul className="data-tables">
          {tables.map((t) => (
            <TableRow key={t.name} table={t} canEdit={canEdit} />
          ))}
        </ul>
      )}
      <LibrarySection />
    </section>
  );
}
