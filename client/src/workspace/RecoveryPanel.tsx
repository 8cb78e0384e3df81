/**
 * What the owner of a workspace that needs recovery sees (4424 workspace-needs-recovery): the
 * problem the server found, and the two ways back — the last good version, or a repair that
 * removes what breaks the document schema. The stored bytes are set aside by the server first.
 * Others see the notice above it and are told to ask the owner.
 */
import { useEffect, useState } from 'react';
import { apiRequest } from '../api/http.ts';

interface RecoveryInfo {
  needsRecovery: boolean;
  problem?: string;
  details?: string[];
  lastGood?: { kept: number; dropped: number } | null;
  repair?: { removed: number } | null;
}

const plural = (n: number, w: string) => `${n} ${w}${n === 1 ? '' : 's'}`;

export function RecoveryPanel({ workspaceId, token }: { workspaceId: string; token: string }) {
  const [info, setInfo] = useState<RecoveryInfo | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const path = `/api/workspaces/${encodeURIComponent(workspaceId)}/recovery`;

  useEffect(() => {
    apiRequest<RecoveryInfo>(path, { token }).then(setInfo, (e: Error) => setError(e.message));
  }, [path, token]);

  const act = async (action: 'last-good' | 'repair') => {
    setBusy(true);
    try {
      await apiRequest(path, { method: 'POST', body: { action }, token });
      window.location.reload();
    } catch (e) {
      setError((e as Error).message);
      setBusy(false);
    }
  };

  if (error) return <div className="recovery" role="alert" data-testid="recovery-error">Recovery is not available: {error}</div>;
  if (!info) return <div className="recovery">Looking at what went wrong…</div>;
  if (!info.needsRecovery)
    return (
      <div className="recovery" data-testid="recovery">
        The workspace loads again. <button className="btn" onClick={() => window.location.reload()}>Reload</button>
      </div>
    );
  return (
    <section className="recovery" data-testid="recovery" aria-label="Recover this workspace">
      <h2>This workspace needs recovery</h2>
      <p data-testid="recovery-problem">Plexus will not open it as stored because {info.problem}.</p>
      {info.details && info.details.length > 0 && (
        <details>
          <summary>{plural(info.details.length, 'problem')} found</summary>
          <ul className="recovery-details">
            {info.details.slice(0, 20).map((d) => <li key={d}><code>{d}</code></li>)}
          </ul>
        </details>
      )}
      <p>Whatever you choose, the stored state is first copied aside on the server (<code>quarantine/</code>), and everyone’s open copies are refreshed.</p>
      <div className="recovery-actions">
        {info.lastGood && (
          <button className="btn btn-primary" disabled={busy} data-testid="recover-last-good" onClick={() => void act('last-good')}>
            Restore the last good version
            <small> — keeps {plural(info.lastGood.kept, 'later change')}{info.lastGood.dropped ? `, sets aside ${plural(info.lastGood.dropped, 'change')}` : ''}</small>
          </button>
        )}
        {info.repair && (
          <button className="btn" disabled={busy} data-testid="recover-repair" onClick={() => void act('repair')}>
            Repair — remove {plural(info.repair.removed, 'invalid part')}, keep everything else
          </button>
        )}
        {!info.lastGood && !info.repair && <p>No automatic recovery is possible; the stored state is kept as it is.</p>}
      </div>
    </section>
  );
}
