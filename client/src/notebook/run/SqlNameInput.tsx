/**
 * The name of an SQL cell (the variable other cells read its result by), editable in the cell
 * header. Keeps a local draft while focused; commits on Enter or blur through the shared helper.
 */
import { useState } from 'react';
import { isTableName } from '@plexus/shared';
import { useNotebook } from '../controller.ts';

export function SqlNameInput({ cellId, name, canEdit }: { cellId: string; name: string | undefined; canEdit: boolean }) {
  const notebook = useNotebook();
  const [draft, setDraft] = useState<string | null>(null);
  const value = draft ?? name ?? '';
  const invalid = value !== '' && !isTableName(value);
  const commit = () => {
    if (draft !== null && !invalid && draft.trim() !== (name ?? '')) notebook.setName(cellId, draft);
    setDraft(null);
  };
  if (!canEdit)
    return (
      <span className="sql-name" data-testid="sql-name-label">
        {name ?? '(unnamed)'}
      </span>
    );
  return (
    <input
      className={`sql-name-input${invalid ? ' is-invalid' : ''}`}
      data-testid="sql-name"
      aria-label="SQL result name"
      placeholder="result name"
      title={invalid ? 'Letters, digits and _, not starting with a digit' : 'Other cells read this cell’s rows by this name'}
      value={value}
      spellCheck={false}
      onChange={(e) => setDraft(e.target.value)}
      onBlur={commit}
      onKeyDown={(e) => {
        if (e.key === 'Enter') {
          e.preventDefault();
          commit();
        } else if (e.key === 'Escape') setDraft(null);
      }}
    />
  );
}
