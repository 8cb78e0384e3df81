/** The `data` registry as React data (every uploaded table, by name). Effects: a Yjs observer. */
import { useMemo } from 'react';
import type * as Y from 'yjs';
import { listTables, roots, type DataTable } from '@plexus/shared';
import { useYVersion } from '../collab/useY.ts';

export function useTables(doc: Y.Doc): DataTable[] {
  const v = useYVersion(roots(doc).data);
  return useMemo(() => listTables(doc), [doc, v]);
}
