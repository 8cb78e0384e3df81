/** The bar at the top of the notebook: kernel commands and status, the data panel toggle, import/export. */
import { useSession } from '../collab/context.tsx';
import { useTables } from '../data/useTables.ts';
import { useUi } from '../state/ui.ts';
import { KernelBar } from './run/KernelBar.tsx';
import { NotebookIo } from './NotebookIo.tsx';

export function NotebookToolbar() {
  const session = useSession();
  const tables = useTables(session.doc);
  const dataOpen = useUi((s) => s.dataOpen);
  const setDataOpen = useUi((s) => s.setDataOpen);
  return (
    <div className="notebook-toolbar" data-testid="notebook-toolbar">
      <KernelBar />
      <div className="header-spacer" />
      <button
        className={`btn btn-small toggle${dataOpen ? ' is-on' : ''}`}
        data-testid="data-toggle"
        aria-pressed={dataOpen}
        title="Uploaded tables"
        onClick={() => setDataOpen(!dataOpen)}
      >
        Data ({tables.length})
      </button>
      <NotebookIo />
    </div>
  );
}
