/**
 * Notebook import and export: import a Jupyter `.ipynb` (editors; its cells are appended), export
 * `.ipynb` or a self-contained HTML report (everyone), all through the server endpoints.
 * Effects: network, file downloads.
 */
import { useState } from 'react';
import { downloadExport, importIpynb } from '../api/notebook.ts';
import { useApiToken } from '../api/tokenContext.ts';
import { useCanEdit, useSession } from '../collab/context.tsx';

export function NotebookIo() {
  const session = useSession();
  const token = useApiToken();
  const canEdit = useCanEdit();
  const [msg, setMsg] = useState<{ tone: 'error' | 'done'; text: string } | null>(null);
  const id = session.workspace.id;
  const exportAs = (f: 'ipynb' | 'html') => downloadExport(token, id, f).catch((e: Error) => setMsg({ tone: 'error', text: e.message }));
  const onFile = async (file: File) => {
    setMsg(null);
    try {
      const nb: unknown = JSON.parse(await file.text());
      const r = await importIpynb(token, id, nb);
      const langs = r.languages.filter((l) => !['javascript', 'sql'].includes(l));
      setMsg({ tone: 'done', text: `Imported ${r.imported} cells from ${file.name}${langs.length ? ` (${langs.join(', ')} code kept with its outputs; Plexus does not run it)` : ''}.` });
    } catch (e) {
      setMsg({ tone: 'error', text: e instanceof SyntaxError ? `${file.name} is not a JSON notebook: ${e.message}` : (e as Error).message });
    }
  };
  return (
    <div className="notebook-io">
      {canEdit && (
        <label className="btn btn-small" title="Import a Jupyter notebook (.ipynb): its cells are appended">
          Import
          <input
            type="file"
            hidden
            accept=".ipynb,application/x-ipynb+json,application/json"
            data-testid="notebook-import"
            onChange={(e) => {
              const f = e.target.files?.[0];
              if (f) void onFile(f);
              e.target.value = '';
            }}
          />
        </label>
      )}
      <button className="btn btn-small" data-testid="notebook-export-ipynb" title="Download as a Jupyter notebook (.ipynb)" onClick={() => exportAs('ipynb')}>
        Export
      </button>
      <button className="btn btn-small" data-testid="notebook-export-html" title="A self-contained HTML report with the outputs" onClick={() => exportAs('html')}>
        Report
      </button>
      {msg && (
        <span className={msg.tone === 'error' ? 'io-error' : 'muted'} data-testid={msg.tone === 'error' ? 'notebook-io-error' : 'notebook-io-done'} role="status">
          {msg.text}
        </span>
      )}
    </div>
  );
}
