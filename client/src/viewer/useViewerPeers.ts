/**
 * Who is in the viewer and how they navigate (shared view, on their own, following someone),
 * from awareness. Re-renders only when a mode or a name changes, not on every camera move.
 */
import { useCallback, useRef, useSyncExternalStore } from 'react';
import type { Awareness } from 'y-protocols/awareness';
import { readPresence, type PresenceUser } from '@plexus/shared';
import { readViewerPresence, type ViewerPresence } from './viewerBinding.ts';

export interface ViewerPeer {
  clientId: number;
  user: PresenceUser;
  mode: ViewerPresence['mode'];
  following?: string;
  self: boolean;
}

const key = (ps: ViewerPeer[]) => ps.map((p) => `${p.clientId}:${p.user.id}:${p.user.name}:${p.mode}:${p.following ?? ''}`).join('|');

export function useViewerPeers(awareness: Awareness): ViewerPeer[] {
  const cache = useRef<{ key: string; peers: ViewerPeer[] }>({ key: '', peers: [] });
  const subscribe = useCallback(
    (cb: () => void) => {
      awareness.on('change', cb);
      return () => awareness.off('change', cb);
    },
    [awareness],
  );
  const get = useCallback(() => {
    const peers: ViewerPeer[] = [];
    awareness.getStates().forEach((state, clientId) => {
      const p = readPresence(state);
      const v = readViewerPresence(state);
      if (!p || !v) return;
      peers.push({ clientId, user: p.user, mode: v.mode, following: v.following, self: clientId === awareness.clientID });
    });
    peers.sort((a, b) => (a.self !== b.self ? (a.self ? -1 : 1) : a.clientId - b.clientId));
    const k = key(peers);
    if (k !== cache.current.key) cache.current = { key: k, peers };
    return cache.current.peers;
  }, [awareness]);
  return useSyncExternalStore(subscribe, get);
}
