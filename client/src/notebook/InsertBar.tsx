/** "+ Code / + Markdown / + SQL" buttons: between cells (after one) or at the end of the notebook. */
import type { CellId, CellKind } from '@plexus/shared';
import { useNotebook } from './controller.ts';

const KINDS: Array<[CellKind, string]> = [
  ['code', 'Code'],
  ['markdown', 'Markdown'],
  ['sql', 'SQL'],
];

/**
 * `after` set: a hover bar under that cell (test ids `insert-<kind>`). Unset: the permanent bar
 * at the end of the notebook (test ids `add-<kind>`, unique on the page).
 */
export function InsertBar({ after }: { after?: CellId }) {
  const notebook = useNotebook();
  const atEnd = after === undefined;
  return (
    <div className={atEnd ? 'add-bar' : 'insert-bar'} role="group" aria-label={atEnd ? 'Add a cell at the end' : 'Insert a cell below'}>
      {KINDS.map(([kind, label]) => (
        <button
          key={kind}
          className="add-btn"
          data-testid={atEnd ? `add-${kind}` : `insert-${kind}`}
          title={atEnd ? `Add a ${label} cell at the end` : `Insert a ${label} cell below`}
          onClick={() => notebook.addCell(kind, atEnd ? undefined : { after: after! })}
        >
          + {label}
        </button>
      ))}
    </div>
  );
}
