/**
 * A derived view of awareness for the UI: who is here and who focuses which cell. Recomputed on
 * awareness 'change' (cursor moves included), so it is kept cheap, and per-cell arrays keep their
 * identity when unchanged: a thousand cell components can subscribe without re-rendering.
 */
import { useCallback, useSyncExternalStore } from 'react';
import type { Awareness } from 'y-protocols/awareness';
import { readPresence, type PresenceFocus, type PresenceUser } from '@plexus/shared';

export interface Peer {
  clientId: number;
  user: PresenceUser;
  focus: PresenceFocus | null;
  self: boolean;
}

const EMPTY: Peer[] = [];
const peerKey = (p: Peer) => `${p.clientId}:${p.user.name}:${p.user.color}`;
const sameList = (a: Peer[], b: Peer[]) => a.length === b.length && a.every((p, i) => peerKey(p) === peerKey(b[i]!));

export class PresenceIndex {
  private peers: Peer[] = EMPTY;
  private byCell = new Map<string, Peer[]>();
  private listeners = new Set<() => void>();

  constructor(private readonly awareness: Awareness) {
    awareness.on('change', this.recompute);
    this.recompute();
  }

  private recompute = (): void => {
    const self = this.awareness.clientID;
    const all: Peer[] = [];
    this.awareness.getStates().forEach((state, clientId) => {
      const p = readPresence(state);
      if (p) all.push({ clientId, user: p.user, focus: p.focus ?? null, self: clientId === self });
    });
    all.sort((a, b) => (a.self !== b.self ? (a.self ? -1 : 1) : a.clientId - b.clientId));
    const byCell = new Map<string, Peer[]>();
    for (const p of all) {
      if (p.self || p.focus?.panel !== 'notebook' || !p.focus.cellId) continue;
      const list = byCell.get(p.focus.cellId) ?? [];
      list.push(p);
      byCell.set(p.focus.cellId, list);
    }
    // Keep old arrays where nothing changed so subscribers bail out of rendering.
    for (const [cell, list] of byCell) {
      const old = this.byCell.get(cell);
      if (old && sameList(old, list)) byCell.set(cell, old);
    }
    this.byCell = byCell;
    if (!sameList(this.peers, all) || all.some((p, i) => p.focus?.cellId !== this.peers[i]?.focus?.cellId)) this.peers = all;
    this.listeners.forEach((l) => l());
  };

  subscribe = (cb: () => void): (() => void) => {
    this.listeners.add(cb);
    return () => this.listeners.delete(cb);
  };

  getPeers = (): Peer[] => this.peers;
  peersOnCell = (cellId: string): Peer[] => this.byCell.get(cellId) ?? EMPTY;

  destroy(): void {
    this.awareness.off('change', this.recompute);
    this.listeners.clear();
  }
}

const indexes = new WeakMap<Awareness, PresenceIndex>();

/** The (shared) presence index of an awareness instance. */
export function presenceIndex(awareness: Awareness): PresenceIndex {
  let idx = indexes.get(awareness);
  if (!idx) {
    idx = new PresenceIndex(awareness);
    indexes.set(awareness, idx);
  }
  return idx;
}

/** Everyone connected, the local tab first. */
export function usePeers(awareness: Awareness): Peer[] {
  const idx = presenceIndex(awareness);
  return useSyncExternalStore(idx.subscribe, idx.getPeers);
}

/** Other people whose focus is on `cellId`. */
export function usePeersOnCell(awareness: Awareness, cellId: string): Peer[] {
  const idx = presenceIndex(awareness);
  const get = useCallback(() => idx.peersOnCell(cellId), [idx, cellId]);
  return useSyncExternalStore(idx.subscribe, get);
}

/** Publishes which panel/cell has the local focus (others see badges). */
export function setFocus(awareness: Awareness, focus: PresenceFocus): void {
  const cur = (awareness.getLocalState() as { focus?: PresenceFocus } | null)?.focus;
  if (cur && cur.panel === focus.panel && cur.cellId === focus.cellId) return;
  awareness.setLocalStateField('focus', focus);
}
