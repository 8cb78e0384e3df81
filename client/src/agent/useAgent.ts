/**
 * React views of the agent's part of the document and awareness: runs (re-read on any change
 * under the `runs` root, activity and audit included), the agent peer in awareness, and the
 * workspace's agent mode. Effects: Yjs observers and an awareness listener.
 */
import { useMemo, useSyncExternalStore } from 'react';
import type * as Y from 'yjs';
import type { Awareness } from 'y-protocols/awareness';
import { getSettings, listRuns, readPresence, roots, type RunView, type WorkspaceSettings } from '@plexus/shared';
import { useYVersion } from '../collab/useY.ts';

export interface RunsIndex {
  all: RunView[];
  /** A run by the id of its request message or its reply message. */
  byMessage: Map<string, RunView>;
  byId: Map<string, RunView>;
}

export function indexRuns(doc: Y.Doc): RunsIndex {
  const all = listRuns(doc);
  const byMessage = new Map<string, RunView>();
  const byId = new Map<string, RunView>();
  for (const r of all) {
    byId.set(r.id, r);
    byMessage.set(r.request.messageId, r);
    if (r.replyId) byMessage.set(r.replyId, r);
  }
  return { all, byMessage, byId };
}

/** Every run, re-read whenever anything under `runs` changes. */
export function useRuns(doc: Y.Doc): RunsIndex {
  const runs = roots(doc).runs;
  const v = useYVersion(runs, true);
  // eslint-disable-next-line react-hooks/exhaustive-deps
  return useMemo(() => indexRuns(doc), [doc, runs, v]);
}

/** The workspace settings (agent mode, …), live. */
export function useSettings(doc: Y.Doc): WorkspaceSettings {
  const meta = roots(doc).meta;
  const v = useYVersion(meta, true);
  // eslint-disable-next-line react-hooks/exhaustive-deps
  return useMemo(() => getSettings(doc), [doc, meta, v]);
}

export interface AgentPeer {
  name: string;
  color: string;
  model: string | null;
}

const peerKey = (p: AgentPeer | null) => (p ? `${p.name}\n${p.color}\n${p.model ?? ''}` : '');
const cache = new WeakMap<Awareness, { peer: AgentPeer | null; key: string }>();

/** The agent peer among the awareness states (`user.kind === 'agent'`), or null when none is connected. */
export function readAgentPeer(awareness: Awareness): AgentPeer | null {
  let found: AgentPeer | null = null;
  awareness.getStates().forEach((state) => {
    const p = readPresence(state);
    if (!p || p.user.kind !== 'agent' || found) return;
    const agent = (state as { agent?: { model?: unknown } }).agent;
    found = { name: p.user.name, color: p.user.color, model: typeof agent?.model === 'string' ? agent.model : null };
  });
  return found;
}

export function useAgentPeer(awareness: Awareness): AgentPeer | null {
  return useSyncExternalStore(
    (cb) => {
      awareness.on('change', cb);
      return () => awareness.off('change', cb);
    },
    () => {
      // A stable object while nothing relevant changed (useSyncExternalStore compares identity).
      const next = readAgentPeer(awareness);
      const key = peerKey(next);
      const old = cache.get(awareness);
      if (old && old.key === key) return old.peer;
      cache.set(awareness, { peer: next, key });
      return next;
    },
  );
}
