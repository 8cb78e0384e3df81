/**
 * The atlas in awareness: each person publishes which map they look at, the row under their
 * mouse and their camera in the `atlas` field (never the document). Others draw hovered rows as
 * rings with the person's name and can follow a camera on the same map.
 * Effects: awareness writes (throttled), subscriptions.
 */
import { useCallback, useRef, useSyncExternalStore } from 'react';
import type { Awareness } from 'y-protocols/awareness';
import { readPresence, type PresenceUser } from '@plexus/shared';

/** Camera: its centre in map coordinates and the library's camera distance (1 = the whole map). */
export interface AtlasCamera {
  center: [number, number];
  distance: number;
}

export interface AtlasPresence {
  mapId: string;
  /** 0-based row of the source table under the mouse, or null. */
  hover: number | null;
  camera: AtlasCamera | null;
  /** Whom this person follows (a presence user id). */
  following?: string;
}

export function readAtlasPresence(state: unknown): AtlasPresence | null {
  const a = state && typeof state === 'object' ? (state as { atlas?: unknown }).atlas : null;
  if (!a || typeof a !== 'object') return null;
  const p = a as Partial<AtlasPresence>;
  if (typeof p.mapId !== 'string') return null;
  const cam = p.camera;
  const camera =
    cam && Array.isArray(cam.center) && cam.center.length === 2 && cam.center.every((v) => typeof v === 'number' && Number.isFinite(v)) && typeof cam.distance === 'number' && cam.distance > 0
      ? { center: [cam.center[0]!, cam.center[1]!] as [number, number], distance: cam.distance }
      : null;
  return {
    mapId: p.mapId,
    hover: typeof p.hover === 'number' && Number.isInteger(p.hover) && p.hover >= 0 ? p.hover : null,
    camera,
    ...(typeof p.following === 'string' ? { following: p.following } : {}),
  };
}

const INTERVAL_MS = 80;

/** Publishes the local `atlas` field, at most once per interval (the last value always goes out). */
export class AtlasPresencePublisher {
  private state: AtlasPresence | null = null;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private last = 0;

  constructor(private readonly awareness: Awareness) {}

  update(patch: Partial<AtlasPresence> & { mapId: string }): void {
    const base: AtlasPresence = this.state && this.state.mapId === patch.mapId ? this.state : { mapId: patch.mapId, hover: null, camera: null };
    this.state = { ...base, ...patch };
    if (this.timer) return;
    const wait = INTERVAL_MS - (Date.now() - this.last);
    if (wait <= 0) this.send();
    else this.timer = setTimeout(() => this.send(), wait);
  }

  private send(): void {
    this.timer = undefined;
    this.last = Date.now();
    this.awareness.setLocalStateField('atlas', this.state);
  }

  /** Leaves the atlas (panel closed, map changed to none). */
  clear(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.state = null;
    const st = this.awareness.getLocalState();
    if (st && (st as { atlas?: unknown }).atlas) this.awareness.setLocalStateField('atlas', null);
  }
}

export interface AtlasPeer {
  clientId: number;
  user: PresenceUser;
  atlas: AtlasPresence;
}

/** Other people on `mapId` (hover and camera included: re-renders on their moves). */
export function useAtlasPeers(awareness: Awareness, mapId: string | null): AtlasPeer[] {
  const cache = useRef<{ key: string; peers: AtlasPeer[] }>({ key: '', peers: [] });
  const subscribe = useCallback(
    (cb: () => void) => {
      awareness.on('change', cb);
      return () => awareness.off('change', cb);
    },
    [awareness],
  );
  const get = useCallback(() => {
    const peers: AtlasPeer[] = [];
    if (mapId)
      awareness.getStates().forEach((state, clientId) => {
        if (clientId === awareness.clientID) return;
        const p = readPresence(state);
        const a = readAtlasPresence(state);
        if (p && a && a.mapId === mapId) peers.push({ clientId, user: p.user, atlas: a });
      });
    peers.sort((a, b) => a.clientId - b.clientId);
    const key = JSON.stringify(peers.map((p) => [p.clientId, p.user.id, p.user.name, p.user.color, p.atlas.hover, p.atlas.camera, p.atlas.following ?? null]));
    if (key !== cache.current.key) cache.current = { key, peers };
    return cache.current.peers;
  }, [awareness, mapId]);
  return useSyncExternalStore(subscribe, get);
}
