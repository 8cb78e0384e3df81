/**
 * A table output: the preview rows the document holds, and further pages fetched by result id
 * over the HTTP API ("rows x–y of N"). Also renders uploaded-table previews (`DataTableView`).
 * Effects: network (pages past the preview).
 */
import { useEffect, useState } from 'react';
import type { CellOutput, Json, TableColumn } from '@plexus/shared';
import { fetchResultRows, type RowsPage } from '../../api/notebook.ts';
import { useApiToken } from '../../api/tokenContext.ts';
import { useSession } from '../../collab/context.tsx';
import { displayText, isRounded, rawText } from './formatValue.ts';

type TableOut = Extract<CellOutput, { type: 'table' }>;

export const PAGE_ROWS = 50;

/**
 * Copying a selection inside a table gives the full values (tab-separated rows), not the rounded
 * ones on screen.
 */
function copyRawValues(e: React.ClipboardEvent<HTMLTableElement>): void {
  const sel = window.getSelection();
  if (!sel || sel.isCollapsed) return;
  const rows: string[] = [];
  for (const tr of e.currentTarget.querySelectorAll('tr')) {
    const cells = [...tr.querySelectorAll<HTMLElement>('td[data-raw], th')].filter((c) => sel.containsNode(c, true));
    if (cells.length) rows.push(cells.map((c) => (c.dataset.raw ?? c.firstChild?.textContent ?? '').trim()).join('\t'));
  }
  if (rows.length === 0) return;
  e.preventDefault();
  e.clipboardData.setData('text/plain', rows.join('\n'));
}

/** Selectable rows (data previews): `offset` is the absolute index of the first row shown. */
export interface RowSelectionProps {
  offset: number;
  selected: ReadonlySet<number>;
  onRowClick(row: number, e: { shiftKey: boolean; ctrlKey: boolean; metaKey: boolean }): void;
}

/** A plain table with its column types in the header; rows are selectable when `selection` is given. */
export function RowsTable({ columns, rows, selection }: { columns: TableColumn[]; rows: Array<Record<string, Json>>; selection?: RowSelectionProps }) {
  return (
    <div className="table-scroll">
      <table className="out-table-grid" onCopy={copyRawValues} aria-multiselectable={selection ? true : undefined} role={selection ? 'grid' : undefined}>
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c.name} title={c.type}>
                {c.name} <span className="col-type">{c.type}</span>
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((r, i) => (
            <tr
              key={i}
              {...(selection && {
                'data-row': selection.offset + i,
                'aria-selected': selection.selected.has(selection.offset + i),
                className: `is-selectable${selection.selected.has(selection.offset + i) ? ' is-selected' : ''}`,
                onMouseDown: (e: { shiftKey: boolean; preventDefault(): void }) => e.shiftKey && e.preventDefault(),
                onClick: (e: { shiftKey: boolean; ctrlKey: boolean; metaKey: boolean }) => selection.onRowClick(selection.offset + i, e),
              })}
            >
              {columns.map((c) => (
                <td key={c.name} data-raw={rawText(r[c.name])} title={isRounded(r[c.name]) ? rawText(r[c.name]) : undefined} className={typeof r[c.name] === 'number' ? 'is-num' : undefined}>
                  {displayText(r[c.name])}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

interface PagerProps {
  offset: number;
  shown: number;
  total: number;
  canPage: boolean;
  loading: boolean;
  onOffset(o: number): void;
}

/** "rows x–y of N" with previous / next. */
export function Pager({ offset, shown, total, canPage, loading, onOffset }: PagerProps) {
  return (
    <div className="table-pager">
      <span data-testid="table-range">
        {total === 0 ? 'no rows' : `rows ${(offset + 1).toLocaleString()}–${(offset + shown).toLocaleString()} of ${total.toLocaleString()}`}
      </span>
      {canPage && (
        <>
          <button className="btn btn-small" data-testid="table-prev" disabled={loading || offset === 0} onClick={() => onOffset(Math.max(0, offset - PAGE_ROWS))}>
            ‹ Prev
          </button>
          <button className="btn btn-small" data-testid="table-next" disabled={loading || offset + shown >= total} onClick={() => onOffset(offset + PAGE_ROWS)}>
            Next ›
          </button>
        </>
      )}
      {loading && <span className="muted">loading…</span>}
    </div>
  );
}

export function TableOutput({ out }: { out: TableOut }) {
  const token = useApiToken();
  const session = useSession();
  const [offset, setOffset] = useState(0);
  const [page, setPage] = useState<RowsPage | null>(null);
  const [error, setError] = useState<string | null>(null);
  const canPage = !!out.ref && out.totalRows > out.rows.length;
  useEffect(() => {
    setOffset(0);
    setPage(null);
  }, [out.ref]);
  useEffect(() => {
    if (offset === 0 || !out.ref) return;
    const ctl = new AbortController();
    setError(null);
    fetchResultRows(token, session.workspace.id, out.ref, offset, PAGE_ROWS, ctl.signal).then(setPage, (e: Error) => e.name !== 'AbortError' && setError(e.message));
    return () => ctl.abort();
  }, [offset, out.ref, token, session]);
  const current = offset === 0 ? { rows: out.rows.slice(0, PAGE_ROWS), columns: out.columns } : page && page.offset === offset ? page : null;
  return (
    <div className="out-table" data-testid="output-table">
      <Pager offset={offset} shown={current?.rows.length ?? 0} total={out.totalRows} canPage={canPage} loading={!current && !error} onOffset={setOffset} />
      {error && <div className="out-error">{error}</div>}
      {current && <RowsTable columns={current.columns} rows={current.rows} />}
    </div>
  );
}
