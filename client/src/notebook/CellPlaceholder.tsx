/**
 * What a cell far from the viewport renders instead of an editor: a plain <pre> with its first
 * lines, at the height the editor had (or an estimate). Cheap to build a thousand of, and it keeps
 * the scrollbar honest so scrolling stays stable when editors mount.
 */
import { useMemo } from 'react';
import * as Y from 'yjs';
import { cellSource } from '@plexus/shared';
import { useYVersion } from '../collab/useY.ts';
import type { CellItem } from './useCellList.ts';

const PREVIEW_LINES = 12;
/** Approximate rendered line heights (px) of the two editors, from styles.css. */
const CODE_LINE = 19.5;
const MD_LINE = 24;

/** Estimated editor height for a source text, before the cell was ever measured. */
export function estimateHeight(kind: CellItem['kind'], text: string): number {
  const lines = Math.max(1, text.split('\n').length);
  if (kind === 'markdown') {
    const headings = (text.match(/^#{1,6}\s/gm) ?? []).length;
    const blank = (text.match(/\n\s*\n/g) ?? []).length;
    return Math.round((lines - blank) * MD_LINE + headings * 16 + 16);
  }
  return Math.round(lines * CODE_LINE + 12);
}

export interface Preview {
  text: string;
  height: number;
}

/**
 * The preview text and body height of a cell while it has no editor. Follows remote edits (a
 * cell scrolled back into view never shows stale text); does nothing while `enabled` is false.
 */
export function usePreview(item: CellItem, measured: number | undefined, enabled: boolean): Preview | null {
  const source = enabled && item.source instanceof Y.AbstractType ? item.source : null;
  const version = useYVersion(source, item.kind === 'markdown');
  return useMemo(() => {
    if (!enabled) return null;
    const text = cellSource(item.view);
    // Markdown blocks are separated by blank lines in the source but not on screen.
    const shown = item.kind === 'markdown' ? text.replace(/\n\s*\n/g, '\n') : text;
    return { text: shown.split('\n').slice(0, PREVIEW_LINES).join('\n'), height: measured ?? estimateHeight(item.kind, text) };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [item, version, measured, enabled]);
}

export function CellPlaceholder({ kind, preview }: { kind: CellItem['kind']; preview: Preview }) {
  return (
    <pre className={`cell-preview cell-preview-${kind}`} style={{ height: preview.height }} aria-hidden="true">
      {preview.text || ' '}
    </pre>
  );
}
