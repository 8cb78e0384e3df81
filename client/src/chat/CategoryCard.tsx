/**
 * A saved atlas category as a card in a chat message (`{{category name}}` in an answer): hydrated
 * from the document for everyone — the map and table, how many rows, the note and the
 * sub-agent's summary, a few representative rows — with *Show on map* (highlights the rows for
 * everyone and opens the map) and *Open as table* (a new SQL cell selecting those rows). A name no
 * map holds renders as the plain text it was, never as an error.
 */
import { useEffect, useMemo, useState } from 'react';
import { listAtlasMaps, roots, setAtlasHighlight } from '@plexus/shared';
import { categorySql, findCategory } from './categories.ts';
import { useCanEdit, useSession } from '../collab/context.tsx';
import { useYVersion } from '../collab/useY.ts';
import { useApiToken } from '../api/tokenContext.ts';
import { fetchRows, type AtlasRow } from '../atlas/api.ts';
import { useUi } from '../state/ui.ts';
import { insertCellBelowFocusAndRun } from '../notebook/insertAndRun.ts';

export function CategoryCard({ name, raw }: { name: string; raw: string }) {
  const session = useSession();
  const canEdit = useCanEdit();
  const token = useApiToken();
  const v = useYVersion(roots(session.doc).atlas, true);
  const found = useMemo(() => findCategory(listAtlasMaps(session.doc), name), [session.doc, name, v]);
  const [sample, setSample] = useState<AtlasRow[] | null>(null);
  const rowsKey = found ? found.category.rows.slice(0, 3).join(',') : '';
  useEffect(() => {
    if (!found || !rowsKey) return;
    const ctrl = new AbortController();
    fetchRows(token, session.workspace.id, found.map.id, found.category.rows.slice(0, 3), ctrl.signal).then((r) => setSample(r.rows), () => setSample(null));
    return () => ctrl.abort();
  }, [token, session.workspace.id, found?.map.id, rowsKey]);
  if (!found) return <>{raw}</>;
  const { map, category } = found;
  const showOnMap = () => {
    setAtlasHighlight(session.doc, map.id, { rows: category.rows, label: name, by: session.origin.userId, ...(session.origin.name ? { name: session.origin.name } : {}), at: Date.now() }, session.origin);
    useUi.getState().setAtlasOpen(true);
  };
  return (
    <span className="category-card" data-testid="category-card" data-category={name} data-map={map.id}>
      <span className="category-card-head">
        <strong>{name}</strong> <span className="muted">· {category.rows.length.toLocaleString()} rows of {map.table}</span>
      </span>
      {category.note && <span className="category-card-note">{category.note}</span>}
      {category.summary && <span className="category-card-summary muted">{category.summary}</span>}
      {sample && sample.length > 0 && (
        <span className="category-card-rows muted" data-testid="category-card-rows">
          {sample.map((r) => (
            <span key={r.row}>
              row {r.row}: {Object.entries(r).filter(([k]) => k !== 'row').slice(0, 4).map(([k, val]) => `${k} ${String(val).slice(0, 40)}`).join(', ')}
            </span>
          ))}
        </span>
      )}
      <span className="category-card-actions">
        <button className="btn btn-small" data-testid="category-show" onClick={showOnMap} disabled={!canEdit} title="Highlight these rows on the map for everyone">
          Show on map
        </button>
        {canEdit && (
          <button className="btn btn-small" data-testid="category-table" onClick={() => insertCellBelowFocusAndRun(session, { kind: 'sql', source: categorySql(map.table, category.rows) })} title="A new SQL cell with these rows">
            Open as table
          </button>
        )}
      </span>
    </span>
  );
}
