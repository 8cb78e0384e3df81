/** The workspace's atlas maps as React data (every change inside a map included). Effects: a Yjs observer. */
import { useMemo } from 'react';
import type * as Y from 'yjs';
import { listAtlasMaps, roots, type AtlasMapView } from '@plexus/shared';
import { useYVersion } from '../collab/useY.ts';

export function useAtlasMaps(doc: Y.Doc): AtlasMapView[] {
  const v = useYVersion(roots(doc).atlas, true);
  return useMemo(() => listAtlasMaps(doc), [doc, v]);
}
