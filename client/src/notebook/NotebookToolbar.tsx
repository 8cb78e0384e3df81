/** The bar at the top of the notebook: kernel commands and status, the data and analyses panel toggles, import/export. */
import { isJobFinished } from '@plexus/shared';
import { useSession } from '../collab/context.tsx';
import { useJobs } from '../analyses/useJobs.ts';
import { useTables } from '../data/useTables.ts';
import { useUi } from '../state/ui.ts';
import { KernelBar } from './run/KernelBar.tsx';
import { NotebookIo } from './NotebookIo.tsx';

export function NotebookToolbar() {
  const session = useSession();
  const tables = useTables(session.doc);
  const dataOpen = useUi((s) => s.dataOpen);
  const setDataOpen = useUi((s) => s.setDataOpen);
  const jobs = useJobs(session.doc);
  const active = jobs.filter((j) => !isJobFinished(j.status)).length;
  const analysesOpen = useUi((s) => s.analysesOpen);
  const setAnalysesOpen = useUi((s) => s.setAnalysesOpen);
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
      {/* Shown once the workspace has analyses (they start from a movie in the viewer): the toolbar stays one line at 1,400 px without. */}
      {jobs.length > 0 && (
        <button
          className={`btn btn-small toggle${analysesOpen ? ' is-on' : ''}`}
          data-testid="analyses-toggle"
          data-active={active}
          aria-pressed={analysesOpen}
          title={active ? `Analyses: ${active} running or queued` : 'Analyses run on the server: progress, results, ROI edits'}
          onClick={() => setAnalysesOpen(!analysesOpen)}
        >
          {active > 0 && <span className="job-dot" aria-hidden="true" />}
          Analyses ({jobs.length})
        </button>
      )}
      <NotebookIo />
    </div>
  );
}
