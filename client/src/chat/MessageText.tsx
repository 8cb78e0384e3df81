/**
 * A chat message's text with its links: ordinary links open in a new tab; Neuroglancer state
 * links, which run to thousands of characters, are shown masked with an "Open in viewer" action
 * that loads the state into the workspace's shared viewer.
 */
import { createContext, useContext, useMemo, useState, type ReactNode } from 'react';
import { canWrite, parseStateInput, portableState, replaceViewerState, splitLinks } from '@plexus/shared';
import { ProvenanceButtons } from '../agent/PlanView.tsx';
import { useSession } from '../collab/context.tsx';
import { parseInline, splitBlocks, splitPlaceholders, splitWorkspaceLinks } from './markdown.ts';
import { CategoryCard } from './CategoryCard.tsx';
import { typedAgentMentions } from './typedMention.ts';

/** Whether the message was addressed to the agent: its `@agent` words show as the mention chip. */
const AddressesAgent = createContext(false);

/** Plain text with its `@agent` mentions as chips (only in messages that asked the agent). */
function PlainText({ text }: { text: string }) {
  const toAgent = useContext(AddressesAgent);
  const found = toAgent ? typedAgentMentions(text, true) : [];
  if (found.length === 0) return <>{text}</>;
  const out: ReactNode[] = [];
  let at = 0;
  found.forEach((m, i) => {
    out.push(text.slice(at, m.index));
    out.push(
      <span key={i} className="mention" data-mention="agent">
        {text.slice(m.index, m.index + m.length)}
      </span>,
    );
    at = m.index + m.length;
  });
  out.push(text.slice(at));
  return <>{out}</>;
}

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

/** Inline markdown of a text run (bold, italic, code). */
function InlineText({ text }: { text: string }) {
  const cards = splitPlaceholders(text);
  if (cards.some((c) => c.kind === 'placeholder'))
    return <>{cards.map((c, i) => (c.kind === 'placeholder' ? <CategoryCard key={i} name={c.name} raw={c.raw} /> : <InlineText key={i} text={c.text} />))}</>;
  const spans = parseInline(text);
  if (spans.length === 1 && spans[0]!.kind === 'text') return <PlainText text={text} />;
  return (
    <>
      {spans.map((s, i) =>
        s.kind === 'bold' ? <strong key={i}>{s.text}</strong> : s.kind === 'italic' ? <em key={i}>{s.text}</em> : s.kind === 'code' ? <code key={i} className="chat-code">{s.text}</code> : <span key={i}><PlainText text={s.text} /></span>,
      )}
    </>
  );
}

/** Text with workspace links (`[cell 3](plexus:cell/…)`) as buttons that focus what they name. */
function TextWithLinks({ text }: { text: string }) {
  const spans = splitWorkspaceLinks(text);
  if (spans.length === 1 && spans[0]!.kind === 'text') return <TextWithWebLinks text={text} />;
  return (
    <>
      {spans.map((s, i) => (s.kind === 'text' ? <TextWithWebLinks key={i} text={s.text} /> : <ProvenanceButtons key={i} links={[s.link]} />))}
    </>
  );
}

function TextWithWebLinks({ text }: { text: string }) {
  const segs = splitLinks(text);
  if (segs.length === 1 && segs[0]!.kind === 'text') return <InlineText text={text} />;
  return (
    <>
      {segs.map((s, i) =>
        s.kind === 'text' ? (
          <InlineText key={i} text={s.text} />
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

/** A message's text: fenced code blocks, inline markdown, links (see markdown.ts). Never HTML. */
export function MessageText({ text, toAgent = false }: { text: string; toAgent?: boolean }) {
  const blocks = useMemo(() => splitBlocks(text), [text]);
  return (
    <AddressesAgent.Provider value={toAgent}>
      {blocks.map((b, i) =>
        b.kind === 'code' ? (
          <pre key={i} className="chat-pre" data-lang={b.lang || undefined}>
            <code>{b.text}</code>
          </pre>
        ) : (
          <TextWithLinks key={i} text={b.text} />
        ),
      )}
    </AddressesAgent.Provider>
  );
}
