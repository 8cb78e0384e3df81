/**
 * The history (a section above the notebook, opened from the header's History button): the
 * workspace's checkpoints — named ones people made, automatic ones before agent runs, imports,
 * restores and every few minutes of work — and between them who changed what, from the server's
 * record of who sent each change. Any checkpoint can be previewed read-only or compared with now
 * (cell by cell, and the viewer); editors restore all of it, one cell or the viewer as an
 * ordinary change of theirs (others keep typing; Undo takes it back in one step), take a
 * checkpoint now, or fork a new workspace from one. Viewers see everything but change nothing.
 */
import { useEffect, useMemo, useState } from 'react';
import type * as Y from 'yjs';
import {
  CHECKPOINT_KIND_WORDS, compareDocs, describeSummary, listCells, listCheckpoints, readOutputs, restoreCheckpoint, roots, cellSource,
  type CellDiff, type CheckpointRecord, type RestoreScope,
} from '@plexus/shared';
import { ApiError } from '../api/http.ts';
import { useCanEdit, useSession } from '../collab/context.tsx';
import type { WorkspaceSession } from '../collab/session.ts';
import { useYVersion } from '../collab/useY.ts';
import { relativeTime } from '../home/relativeTime.ts';
import { lineDiff } from '../agent/lineDiff.ts';
import { CellOutputs } from '../notebook/outputs/CellOutputs.tsx';
import { forkAndOpen } from '../forks/ForkHeader.tsx';
import { useLocalUser } from '../state/user.ts';
import { checkpointDoc, createCheckpoint, fetchHistory, type HistoryEntry } from './api.ts';
import { timeline, formatBytes } from './timeline.ts';
import './history.css';

type View = { id: string; mode: 'preview' | 'compare' } | null;

/** Quiet time after a change before the journal is loaded again. */
const JOURNAL_REFRESH_MS = 2000;

/** Restores `scope` of a checkpoint as one undo step of this person's, after a checkpoint of now. */
export async function restoreFromCheckpoint(session: WorkspaceSession, token: string, cp: CheckpointRecord, scope: RestoreScope, name: string): Promise<string> {
  const past = await checkpointDoc(token, session.workspace.id, cp.id);
  const what = scope.what === 'cell' ? 'a cell' : scope.what === 'viewer' ? 'the viewer' : 'everything';
  await createCheckpoint(token, session.workspace.id, { kind: 'restore', label: `Before restoring ${what} from “${cp.label}”`, name });
  session.undoManager.stopCapturing();
  const r = restoreCheckpoint(session.doc, past, scope, session.origin);
  session.undoManager.stopCapturing();
  const parts = [
    r.cellsChanged.length && `${r.cellsChanged.length} cell${r.cellsChanged.length === 1 ? '' : 's'} changed back`,
    r.cellsAdded.length && `${r.cellsAdded.length} brought back`,
    r.cellsRemoved.length && `${r.cellsRemoved.length} removed`,
    r.viewer && 'the viewer restored',
  ].filter(Boolean);
  return parts.length ? `Restored from “${cp.label}”: ${parts.join(', ')}.` : `Nothing to restore: this already matches “${cp.label}”.`;
}

function EntryRow({ entry }: { entry: HistoryEntry }) {
  const who = entry.actor.name ?? entry.actor.id;
  return (
    <li className={`history-entry kind-${entry.actor.kind}`} data-testid="history-entry" data-actor={who} data-kind={entry.actor.kind}>
      <span className="history-who">{who}</span>
      {entry.actor.kind !== 'person' && <span className="history-tag">{entry.actor.kind}</span>} <span className="history-what">{describeSummary(entry.summary)}</span>
      <span className="muted history-when" title={new Date(entry.end).toLocaleString()}>
        {relativeTime(entry.end)}
      </span>
    </li>
  );
}

function CellChange({ d, onRestore }: { d: CellDiff; onRestore: (() => void) | null }) {
  return (
    <li className={`history-cell status-${d.status}`} data-testid="history-diff-cell" data-cell={d.id} data-status={d.status}>
      <div className="history-cell-head">
        <span className="history-badge">{d.status === 'changed' && !d.sourceChanged ? (d.moved ? 'moved' : d.outputsChanged ? 'new outputs' : 'changed') : d.status}</span> <span className="muted">{d.kind}{d.name ? ` · ${d.name}` : ''}</span>
        {onRestore && (
          <button className="btn btn-small" data-testid="history-restore-cell" onClick={onRestore} title="Make this cell as it was in the checkpoint (one undo step)">
            {d.status === 'added' ? 'Remove it' : 'Restore this cell'}
          </button>
        )}
      </div>
      {d.status === 'changed' && d.sourceChanged ? (
        <pre className="history-diff" aria-label="Changes to the source since the checkpoint">
          {lineDiff(d.before ?? '', d.after ?? '').map((l, i) => (
            <div key={i} className={`diff-${l.op}`}>
              {l.op === 'add' ? '+ ' : l.op === 'del' ? '− ' : '  '}
              {l.text}
            </div>
          ))}
        </pre>
      ) : d.status !== 'changed' ? (
        <pre className="history-source">{d.status === 'added' ? d.after : d.before}</pre>
      ) : null}
      {d.outputsChanged && (
        <div className="history-outputs" data-testid="history-diff-outputs">
          <div>
            <span className="muted">Outputs then{d.stateBefore ? ` (${d.stateBefore})` : ''}</span>
            <CellOutputs outputs={d.outputsBefore} stale={false} />
          </div>
          <div>
            <span className="muted">Now{d.stateAfter ? ` (${d.stateAfter})` : ''}</span>
            <CellOutputs outputs={d.outputsAfter} stale={false} />
          </div>
        </div>
      )}
    </li>
  );
}

function CheckpointView({ cp, mode, token, onDone }: { cp: CheckpointRecord; mode: 'preview' | 'compare'; token: string; onDone: (message: string) => void }) {
  const session = useSession();
  const canEdit = useCanEdit();
  const user = useLocalUser((s) => s.user);
  const [past, setPast] = useState<Y.Doc | null>(null);
  const [error, setError] = useState<string | null>(null);
  const live = useYVersion(roots(session.doc).cells, true);
  useEffect(() => {
    let stop = false;
    checkpointDoc(token, session.workspace.id, cp.id).then((d) => !stop && setPast(d), (e) => !stop && setError(e instanceof ApiError ? e.message : String(e)));
    return () => {
      stop = true;
    };
  }, [token, session.workspace.id, cp.id]);
  const diff = useMemo(() => (past && mode === 'compare' ? compareDocs(past, session.doc) : null), [past, mode, session.doc, live]);
  if (error) return <div className="history-error" role="alert">{error}</div>;
  if (!past) return <div className="muted">Loading the checkpoint…</div>;
  const restore = (scope: RestoreScope) => () => void restoreFromCheckpoint(session, token, cp, scope, user.name).then(onDone, (e) => setError(e instanceof ApiError ? e.message : String(e)));
  if (mode === 'preview')
    return (
      <div className="history-preview" data-testid="history-preview" aria-label={`The notebook at “${cp.label}” (read only)`}>
        {listCells(past).map((c) => (
          <div key={c.id} className="history-preview-cell" data-testid="history-preview-cell" data-cell={c.id}>
            <span className="muted">{c.kind}{c.name ? ` · ${c.name}` : ''}</span>
            <pre className="history-source">{cellSource(c)}</pre>
            <CellOutputs outputs={readOutputs(c)} stale={false} />
          </div>
        ))}
        {listCells(past).length === 0 && <div className="muted">The notebook was empty.</div>}
      </div>
    );
  const changed = diff!.cells.filter((d) => d.status !== 'same');
  return (
    <div className="history-compare" data-testid="history-compare">
      <div className="muted" data-testid="history-compare-counts">
        Since this checkpoint: {diff!.counts.added} added, {diff!.counts.removed} removed, {diff!.counts.changed} changed, {diff!.counts.same} unchanged
        {diff!.viewer.length ? `; viewer: ${diff!.viewer.map((v) => v.key).join(', ')}` : ''}
      </div>
      <ul className="history-cells">
        {changed.map((d) => (
          <CellChange key={d.id} d={d} onRestore={canEdit ? restore({ what: 'cell', id: d.id }) : null} />
        ))}
      </ul>
      {canEdit && diff!.viewer.length > 0 && (
        <button className="btn btn-small" data-testid="history-restore-viewer" onClick={restore({ what: 'viewer' })}>
          Restore the viewer
        </button>
      )}
    </div>
  );
}

function CheckpointRow({ cp, view, setView, token, onMessage }: { cp: CheckpointRecord; view: View; setView: (v: View) => void; token: string; onMessage: (m: string) => void }) {
  const session = useSession();
  const canEdit = useCanEdit();
  const user = useLocalUser((s) => s.user);
  const [confirming, setConfirming] = useState(false);
  const open = view?.id === cp.id ? view.mode : null;
  const toggle = (mode: 'preview' | 'compare') => setView(open === mode ? null : { id: cp.id, mode });
  const fail = (e: unknown) => onMessage(e instanceof ApiError ? e.message : String(e));
  return (
    <li className={`history-checkpoint kind-${cp.kind}`} data-testid="history-checkpoint" data-id={cp.id} data-kind={cp.kind}>
      <div className="history-checkpoint-head">
        <span className="history-flag" aria-hidden="true">⚑</span>
        <strong className="history-label">{cp.label}</strong>
        <span className="muted">
          {CHECKPOINT_KIND_WORDS[cp.kind]} · {cp.by.name ?? cp.by.id} · {cp.cells} cell{cp.cells === 1 ? '' : 's'} · <span title={new Date(cp.at).toLocaleString()}>{relativeTime(cp.at)}</span>
        </span>
        <span className="history-actions">
          <button className={`btn btn-small${open === 'preview' ? ' on' : ''}`} data-testid="history-preview-toggle" onClick={() => toggle('preview')}>
            Preview
          </button>
          <button className={`btn btn-small${open === 'compare' ? ' on' : ''}`} data-testid="history-compare-toggle" onClick={() => toggle('compare')}>
            Compare with now
          </button>
          {canEdit &&
            (confirming ? (
              <>
                <button
                  className="btn btn-small btn-danger"
                  data-testid="history-restore-confirm"
                  onClick={() => {
                    setConfirming(false);
                    void restoreFromCheckpoint(session, token, cp, { what: 'all' }, user.name).then(onMessage, fail);
                  }}
                >
                  Restore notebook and viewer
                </button>
                <button className="btn btn-small" onClick={() => setConfirming(false)}>
                  Cancel
                </button>
              </>
            ) : (
              <button className="btn btn-small" data-testid="history-restore" onClick={() => setConfirming(true)} title="Make the notebook and the viewer as they were (others’ typing meanwhile is kept; Undo takes it back)">
                Restore…
              </button>
            ))}
          <button className="btn btn-small" data-testid="history-fork" onClick={() => void forkAndOpen(token, session.workspace.id, user, cp.id).catch(fail)} title="A new workspace of your own, as it was at this checkpoint">
            Fork from here
          </button>
        </span>
      </div>
      {open && <CheckpointView cp={cp} mode={open} token={token} onDone={onMessage} />}
    </li>
  );
}

export function HistoryPanel({ token, onClose }: { token: string; onClose: () => void }) {
  const session = useSession();
  const canEdit = useCanEdit();
  const user = useLocalUser((s) => s.user);
  const v = useYVersion(roots(session.doc).checkpoints, false);
  const checkpoints = useMemo(() => listCheckpoints(session.doc), [session.doc, v]);
  const [entries, setEntries] = useState<HistoryEntry[]>([]);
  const [usage, setUsage] = useState<{ bytes: number; checkpoints: number } | null>(null);
  const [view, setView] = useState<View>(null);
  const [label, setLabel] = useState('');
  const [message, setMessage] = useState<string | null>(null);
  const [refresh, setRefresh] = useState(0);
  useEffect(() => {
    const ctrl = new AbortController();
    fetchHistory(token, session.workspace.id, ctrl.signal).then(
      (h) => {
        setEntries(h.entries);
        setUsage(h.usage);
      },
      (e) => (e as Error).name !== 'AbortError' && setMessage(e instanceof ApiError ? e.message : String(e)),
    );
    return () => ctrl.abort();
  }, [token, session.workspace.id, v, refresh]);
  // The journal follows the work: reloaded a moment after the document last changed (the
  // server writes an entry per person per minute; the open minute comes back as well).
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const onUpdate = () => {
      clearTimeout(timer);
      timer = setTimeout(() => setRefresh((n) => n + 1), JOURNAL_REFRESH_MS);
    };
    // (After each transaction, not on 'update': no listener should make Yjs encode every change; quietApply.ts.)
    const onTransaction = (tr: Y.Transaction) => {
      if (tr.changed.size || tr.deleteSet.clients.size) onUpdate();
    };
    session.doc.on('afterTransaction', onTransaction);
    return () => {
      clearTimeout(timer);
      session.doc.off('afterTransaction', onTransaction);
    };
  }, [session.doc]);
  const items = useMemo(() => timeline(checkpoints, entries), [checkpoints, entries]);
  const checkpointNow = async () => {
    try {
      const cp = await createCheckpoint(token, session.workspace.id, { label: label.trim() || undefined, name: user.name });
      setLabel('');
      setMessage(`Checkpoint “${cp.label}” saved.`);
    } catch (e) {
      setMessage(e instanceof ApiError ? e.message : String(e));
    }
  };
  return (
    <section className="history-panel" data-testid="history-panel" aria-label="History">
      <div className="history-head">
        <strong>History</strong>
        {usage && (
          <span className="muted" data-testid="history-usage">
            {usage.checkpoints} checkpoint{usage.checkpoints === 1 ? '' : 's'} · {formatBytes(usage.bytes)}
          </span>
        )}
        {canEdit && (
          <form
            className="history-new"
            onSubmit={(e) => {
              e.preventDefault();
              void checkpointNow();
            }}
          >
            <input data-testid="history-label" value={label} maxLength={200} placeholder="Name this moment (optional)" onChange={(e) => setLabel(e.target.value)} aria-label="Checkpoint name" />
            <button className="btn btn-small" type="submit" data-testid="history-checkpoint-now">
              Checkpoint now
            </button>
          </form>
        )}
        <button className="btn btn-small" onClick={() => setRefresh((n) => n + 1)} title="Load the latest changes">
          Refresh
        </button>
        <button className="icon-btn" onClick={onClose} aria-label="Close the history" title="Close">
          ×
        </button>
      </div>
      {message && (
        <div className="history-message" role="status" data-testid="history-message">
          {message}
          {canEdit && message.startsWith('Restored') && (
            <button className="btn btn-small" data-testid="history-undo" onClick={() => session.undoManager.undo()}>
              Undo
            </button>
          )}
          <button className="icon-btn" aria-label="Dismiss" onClick={() => setMessage(null)}>
            ×
          </button>
        </div>
      )}
      <ol className="history-list">
        {items.map((it) =>
          it.type === 'checkpoint' ? (
            <CheckpointRow key={it.checkpoint.id} cp={it.checkpoint} view={view} setView={setView} token={token} onMessage={setMessage} />
          ) : (
            <EntryRow key={`${it.entry.actor.kind}:${it.entry.actor.id}:${it.entry.start}`} entry={it.entry} />
          ),
        )}
        {items.length === 0 && <li className="muted">No changes recorded yet.</li>}
      </ol>
    </section>
  );
}
