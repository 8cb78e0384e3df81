/**
 * Drag-and-drop upload target around the notebook panel (editors): files dropped on it are
 * uploaded as tables and the data panel opens to show their progress.
 * Effects: network (uploads), local UI state.
 */
import { useState, type DragEvent, type ReactNode } from 'react';
import { useApiToken } from '../api/tokenContext.ts';
import { useCanEdit, useSession } from '../collab/context.tsx';
import { useUi } from '../state/ui.ts';
import { useUploads } from './uploads.ts';

const hasFiles = (e: DragEvent) => [...e.dataTransfer.types].includes('Files');

export function DropZone({ children }: { children: ReactNode }) {
  const session = useSession();
  const token = useApiToken();
  const canEdit = useCanEdit();
  const [over, setOver] = useState(false);
  const start = useUploads((s) => s.start);
  if (!canEdit) return <>{children}</>;
  return (
    <div
      className="drop-zone"
      data-testid="data-dropzone"
      data-over={over ? 'true' : 'false'}
      onDragOver={(e) => {
        if (!hasFiles(e)) return;
        e.preventDefault();
        e.dataTransfer.dropEffect = 'copy';
        setOver(true);
      }}
      onDragLeave={(e) => {
        if (!e.currentTarget.contains(e.relatedTarget as Node | null)) setOver(false);
      }}
      onDrop={(e) => {
        if (!hasFiles(e)) return;
        e.preventDefault();
        setOver(false);
        const files = [...e.dataTransfer.files];
        if (!files.length) return;
        useUi.getState().setDataOpen(true);
        for (const f of files) start(token, session.workspace.id, f);
      }}
    >
      {children}
      {over && <div className="drop-overlay">Drop CSV, TSV, Parquet or JSON files to upload them as tables</div>}
    </div>
  );
}
