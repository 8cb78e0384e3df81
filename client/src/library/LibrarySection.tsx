/**
 * The workspace's method library (a section of the Data panel): every document the agent can
 * retrieve and cite — the notes shipped with Plexus and uploads — with its format, passages and
 * who added it, its text in a read-only view, and the markdown cells tagged as notes. Editors
 * upload (file picker, or drop files on the section: .md, .txt, .pdf) and remove documents.
 * Effects: network (uploads, text, removal), local UI state.
 */
import { useEffect, useState, type DragEvent } from 'react';
import type { LibraryDoc } from '@plexus/shared';
import { ApiError } from '../api/http.ts';
import { useApiToken } from '../api/tokenContext.ts';
import { useCanEdit, useSession } from '../collab/context.tsx';
import { revealCell } from '../notebook/reveal.ts';
import { useLocalUser } from '../state/user.ts';
import { deleteLibraryDoc, fetchLibraryText, isLibraryName, LIBRARY_ACCEPT, uploadLibraryDoc } from './api.ts';
import { useLibraryDocs, useNoteCells } from './useLibrary.ts';
import './library.css';

const FORMAT: Record<LibraryDoc['format'], string> = { md: 'markdown', txt: 'text', pdf: 'PDF' };

/** "12.3 KB". Pure. */
const formatBytes = (n: number) => (n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1024 / 1024).toFixed(1)} MB`);

interface Sending {
  id: number;
  name: string;
  error?: string;
}

function DocText({ doc }: { doc: LibraryDoc }) {
  const token = useApiToken();
  const session = useSession();
  const [text, setText] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const ctl = new AbortController();
    fetchLibraryText(token, session.workspace.id, doc.id, ctl.signal).then(
      (r) => setText(r.text),
      (e: Error) => e.name !== 'AbortError' && setError(e.message),
    );
    return () => ctl.abort();
  }, [token, session, doc.id, doc.created]);
  if (error) return <div className="out-error">{error}</div>;
  if (text === null) return <div className="muted">Loading…</div>;
  // PDFs keep their pages apart with form feeds.
  return (
    <pre className="library-doc-text" data-testid="library-doc-text" aria-label={`Text of ${doc.name}`}>
      {text.replace(/\f/g, '\n\n— next page —\n\n')}
    </pre>
  );
}

function DocRow({ doc, canEdit }: { doc: LibraryDoc; canEdit: boolean }) {
  const token = useApiToken();
  const session = useSession();
  const [open, setOpen] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const remove = () => {
    if (!window.confirm(`Remove "${doc.name}" from the library for everyone?`)) return;
    deleteLibraryDoc(token, session.workspace.id, doc.id).catch((e: Error) => setError(e.message));
  };
  const who = doc.builtin ? null : (doc.uploadedBy?.name ?? doc.uploadedBy?.id ?? 'someone');
  return (
    <li className="library-doc" data-testid="library-doc" data-name={doc.name} data-builtin={doc.builtin ? 'true' : 'false'}>
      <div className="library-doc-head">
        <button className="link-btn" data-testid="library-doc-open" aria-expanded={open} onClick={() => setOpen(!open)}>
          {open ? '▾' : '▸'} {doc.name}
        </button>
        <span className="muted">
          {FORMAT[doc.format]} · {doc.passages} {doc.passages === 1 ? 'passage' : 'passages'} · {formatBytes(doc.bytes)}
          {who ? ` · by ${who}` : ''}
        </span>
        {doc.builtin && (
          <span className="library-builtin" title="A method note shipped with Plexus">
            built-in
          </span>
        )}
        {canEdit && (
          <button className="icon-btn danger" data-testid="library-remove" title={`Remove ${doc.name}`} aria-label={`Remove ${doc.name}`} onClick={remove}>
            ✕
          </button>
        )}
      </div>
      {error && <div className="out-error">{error}</div>}
      {open && <DocText doc={doc} />}
    </li>
  );
}

export function LibrarySection() {
  const session = useSession();
  const token = useApiToken();
  const canEdit = useCanEdit();
  const docs = useLibraryDocs(session.doc);
  const notes = useNoteCells(session.doc);
  const [sending, setSending] = useState<Sending[]>([]);
  const [over, setOver] = useState(false);

  const upload = (files: Iterable<File>) => {
    for (const file of files) {
      const id = Math.random();
      if (!isLibraryName(file.name)) {
        setSending((s) => [...s, { id, name: file.name, error: 'The library takes markdown (.md), plain text (.txt) and PDF (.pdf) files.' }]);
        continue;
      }
      setSending((s) => [...s, { id, name: file.name }]);
      uploadLibraryDoc(token, session.workspace.id, file, useLocalUser.getState().user.name).then(
        () => setSending((s) => s.filter((x) => x.id !== id)),
        (e: unknown) => {
          const message = e instanceof ApiError ? e.message : String(e);
          setSending((s) => s.map((x) => (x.id === id ? { ...x, error: message } : x)));
        },
      );
    }
  };
  const hasFiles = (e: DragEvent) => [...e.dataTransfer.types].includes('Files');
  const drop = canEdit
    ? {
        onDragOver: (e: DragEvent) => {
          if (!hasFiles(e)) return;
          // Not the notebook's drop zone around it (that one uploads tables).
          e.preventDefault();
          e.stopPropagation();
          e.dataTransfer.dropEffect = 'copy';
          setOver(true);
        },
        onDragLeave: (e: DragEvent) => {
          if (!e.currentTarget.contains(e.relatedTarget as Node | null)) setOver(false);
        },
        onDrop: (e: DragEvent) => {
          if (!hasFiles(e)) return;
          e.preventDefault();
          e.stopPropagation();
          setOver(false);
          upload([...e.dataTransfer.files]);
        },
      }
    : {};

  return (
    <section className="library-section" data-testid="library-section" aria-label="Library" data-over={over ? 'true' : 'false'} {...drop}>
      <div className="data-panel-head">
        <strong>Library</strong>
        <span className="muted">
          Method notes the agent retrieves and cites{canEdit ? '. Drop .md, .txt or .pdf files here, or tag a markdown cell as a note.' : '.'}
        </span>
        {canEdit && (
          <label className="btn btn-small">
            Add document…
            <input
              type="file"
              hidden
              multiple
              accept={LIBRARY_ACCEPT}
              data-testid="library-upload"
              onChange={(e) => {
                upload([...(e.target.files ?? [])]);
                e.target.value = '';
              }}
            />
          </label>
        )}
      </div>
      {sending.length > 0 && (
        <ul className="uploads">
          {sending.map((u) => (
            <li key={u.id} className={`upload upload-${u.error ? 'error' : 'uploading'}`} data-testid="library-sending">
              <span className="upload-name">{u.name}</span>
              <span className="muted">{u.error ? 'failed' : 'adding…'}</span>
              {u.error && (
                <>
                  <button className="icon-btn" aria-label="Dismiss" onClick={() => setSending((s) => s.filter((x) => x.id !== u.id))}>
                    ✕
                  </button>
                  <div className="upload-error" data-testid="library-upload-error" role="alert">
                    {u.error}
                  </div>
                </>
              )}
            </li>
          ))}
        </ul>
      )}
      {docs.length === 0 ? (
        <div className="muted" data-testid="library-empty">
          No documents in the library.
        </div>
      ) : (
        <ul className="library-docs">
          {docs.map((d) => (
            <DocRow key={d.id} doc={d} canEdit={canEdit} />
          ))}
        </ul>
      )}
      <div className="library-notes muted" data-testid="library-notes">
        {notes.length === 0 ? (
          'No notebook cells are notes yet (“+ note” on a markdown cell adds it).'
        ) : (
          <>
            Notes from the notebook:{' '}
            {notes.map((n, i) => (
              <span key={n.id}>
                {i > 0 && ', '}
                <button className="link-btn" data-testid="library-note" onClick={() => revealCell(n.id, { scroll: 'center' })}>
                  {n.name}
                </button>
              </span>
            ))}
          </>
        )}
      </div>
    </section>
  );
}
