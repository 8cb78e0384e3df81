/**
 * A chat message's text with its links: ordinary links open in a new tab; Neuroglancer state
 * links, which run to thousands of characters, are shown masked with an "Open in viewer" action
 * that loads the state into the workspace's shared viewer.
 */
import { useState } from 'react';
import { canWrite, parseStateInput, portableState, replaceViewerState, splitLinks } from '@plexus/shared';
import { useSession } from '../collab/context.tsx';

function OpenInViewer({ url }: { url: string }) {
  const session = useSession();
  const [note, setNote] = useState<string | null>(null);
  if (!canWrite(session.role)) return null;
  return (
    <>
      <button
        className="link-btn chat-ng-open"
        data-testid="chat-ng-open"
        onClick={() => {
          try {
            const parsed = parseStateInput(url);
            if (parsed.kind !== 'state') return setNote('this link points to a state file; import it from the viewer’s State menu');
            replaceViewerState(session.doc, portableState(parsed.state, window.location.origin), session.origin);
            setNote('opened in the viewer');
          } catch (e) {
            setNote(e instanceof Error ? e.message : String(e));
          }
        }}
      >
        Open in viewer
      </button>
      {note && <span className="muted"> — {note}</span>}
    </>
  );
}

export function MessageText({ text }: { text: string }) {
  const segs = splitLinks(text);
  if (segs.length === 1 && segs[0]!.kind === 'text') return <>{text}</>;
  return (
    <>
      {segs.map((s, i) =>
        s.kind === 'text' ? (
          <span key={i}>{s.text}</span>
        ) : s.neuroglancer ? (
          <span key={i} className="chat-ng-link" data-testid="chat-ng-link">
            <a href={s.url} target="_blank" rel="noreferrer noopener" title="Opens on the Neuroglancer host">
              {s.label}
            </a>{' '}
            <OpenInViewer url={s.url} />
          </span>
        ) : (
          <a key={i} href={s.url} target="_blank" rel="noreferrer noopener">
            {s.label}
          </a>
        ),
      )}
    </>
  );
}
