/**
 * Import a Neuroglancer state (a link, JSON text or a .json file) into the shared viewer, and
 * export what you see as JSON or as a link for the workspace's Neuroglancer host.
 */
import { useState } from 'react';
import {
  canWrite,
  getSettings,
  localizeState,
  maskedLink,
  MAX_CHAT_MESSAGE_CHARS,
  postMessage,
  readPresence,
  parseStateInput,
  portableState,
  replaceViewerState,
  setSetting,
  stateLink,
  type NgState,
} from '@plexus/shared';
import { useSession } from '../collab/context.tsx';
import { Popover } from '../ui/Popover.tsx';
import { copyText as copy } from '../ui/clipboard.ts';
import type { ViewerBinding } from './viewerBinding.ts';

const MAX_STATE_BYTES = 5 * 1024 * 1024;

async function resolveState(input: string): Promise<NgState> {
  const parsed = parseStateInput(input);
  if (parsed.kind === 'state') return parsed.state;
  const url = parsed.url.startsWith('gs://') ? `https://storage.googleapis.com/${parsed.url.slice(5)}` : parsed.url;
  if (!/^https?:\/\//.test(url)) throw new Error(`cannot fetch a state from ${parsed.url}`);
  const res = await fetch(url);
  if (!res.ok) throw new Error(`fetching the state from ${url} failed: HTTP ${res.status}`);
  const text = await res.text();
  const inner = parseStateInput(text);
  if (inner.kind !== 'state') throw new Error('the linked file does not hold a state');
  return inner.state;
}

export function StateMenu({ binding }: { binding: ViewerBinding | null }) {
  const session = useSession();
  const [open, setOpen] = useState(false);
  const [text, setText] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const editable = canWrite(session.role);
  const host = getSettings(session.doc).neuroglancerHost;
  const exported = () => localizeState(binding!.currentState(), window.location.origin);

  const shareInChat = (): string => {
    const link = stateLink(exported(), host);
    const me = readPresence(session.awareness.getLocalState())?.user;
    const text = `Here is what I am looking at: ${maskedLink(link)}`;
    if (text.length > MAX_CHAT_MESSAGE_CHARS) return 'This state is too large for a chat message; save it as a named view instead.';
    postMessage(session.doc, { author: { id: me?.id ?? 'unknown', name: me?.name ?? 'Someone', kind: 'person', color: me?.color }, text }, session.origin);
    return 'Shared in the chat.';
  };

  const doImport = async (input: string) => {
    setError(null);
    setDone(null);
    setBusy(true);
    try {
      const state = await resolveState(input);
      replaceViewerState(session.doc, portableState(state, window.location.origin), session.origin);
      // An import is a deliberate view: move this person there too, whatever their mode (in the
      // shared view the import itself does; after it has been applied to the viewer).
      if (binding && binding.getMode().kind !== 'shared') setTimeout(() => binding.showCamera(state), 0);
      setText('');
      setDone('Imported: everyone now sees this state.');
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="popover-anchor">
      <button className="btn btn-small" data-testid="viewer-state" aria-expanded={open} disabled={!binding} onClick={() => setOpen(!open)}>
        State
      </button>
      <Popover open={open} onClose={() => setOpen(false)} label="Import or export the viewer state" className="viewer-menu viewer-state-menu" testId="viewer-state-menu">
        <h4>Export what you see</h4>
        <div className="row">
          <button className="btn btn-small" data-testid="viewer-copy-json" onClick={async () => setDone((await copy(JSON.stringify(exported(), null, 2))) ? 'State JSON copied.' : 'Copy failed: your browser refused clipboard access.')}>
            Copy JSON
          </button>
          <button
            className="btn btn-small"
            data-testid="viewer-download-json"
            onClick={() => {
              const blob = new Blob([JSON.stringify(exported(), null, 2)], { type: 'application/json' });
              const a = document.createElement('a');
              a.href = URL.createObjectURL(blob);
              a.download = 'neuroglancer-state.json';
              a.click();
              setTimeout(() => URL.revokeObjectURL(a.href), 1000);
            }}
          >
            Download JSON
          </button>
          {editable && (
            <button className="btn btn-small" data-testid="viewer-share-chat" onClick={() => setDone(shareInChat())}>
              Share in chat
            </button>
          )}
          <button className="btn btn-small" data-testid="viewer-copy-link" onClick={async () => setDone((await copy(stateLink(exported(), host))) ? 'Link copied.' : 'Copy failed: your browser refused clipboard access.')}>
            Copy link
          </button>
        </div>
        <label className="muted small">
          Links open on{' '}
          <input
            className="input input-inline"
            data-testid="viewer-ng-host"
            defaultValue={host}
            disabled={!editable}
            onBlur={(e) => {
              const v = e.target.value.trim();
              if (/^https?:\/\/\S+$/.test(v)) setSetting(session.doc, 'neuroglancerHost', v, session.origin);
              else setError('The Neuroglancer host must be an http(s) URL.');
            }}
          />
        </label>
        {editable && (
          <>
            <h4>Import a state</h4>
            <textarea
              className="input"
              rows={4}
              placeholder="Paste a Neuroglancer link or state JSON"
              value={text}
              onChange={(e) => setText(e.target.value)}
              data-testid="viewer-import-text"
            />
            <div className="row">
              <button className="btn btn-small btn-primary" data-testid="viewer-import" disabled={busy || !text.trim()} onClick={() => doImport(text)}>
                Import
              </button>
              <label className="btn btn-small">
                From file…
                <input
                  type="file"
                  accept=".json,application/json"
                  hidden
                  data-testid="viewer-import-file"
                  onChange={async (e) => {
                    const f = e.target.files?.[0];
                    e.target.value = '';
                    if (!f) return;
                    if (f.size > MAX_STATE_BYTES) return setError(`${f.name} is ${(f.size / 1e6).toFixed(1)} MB; a state file may be at most 5 MB.`);
                    await doImport(await f.text());
                  }}
                />
              </label>
            </div>
          </>
        )}
        {error && (
          <p className="form-error" role="alert" data-testid="viewer-state-error">
            {error}
          </p>
        )}
        {done && (
          <p className="muted" role="status" data-testid="viewer-state-done">
            {done}
          </p>
        )}
      </Popover>
    </div>
  );
}
