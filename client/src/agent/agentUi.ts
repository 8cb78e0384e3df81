/**
 * Local UI state of the agent features (never shared): whether the composer addresses the agent,
 * which agent thread a "Reply" follows up, the offline hint's highlight, and one-shot requests
 * from chat buttons to other panels (focus a cell, open a table preview).
 */
import { create } from 'zustand';

/** The agent answer a new message follows up. */
export interface ReplyTarget {
  runId: string;
  messageId: string;
  /** Shown in the composer ("Replying to …"). */
  label: string;
}

/** A one-shot request to another panel; `n` changes on every request so a repeat still fires. */
export interface PanelRequest {
  target: string;
  n: number;
}

interface AgentUiState {
  askAgent: boolean;
  replyTo: ReplyTarget | null;
  /** Bumped when the agent was addressed while offline (the hint flashes). */
  offlineNudge: number;
  focusCell: PanelRequest | null;
  openTable: PanelRequest | null;
  setAskAgent(on: boolean): void;
  setReplyTo(t: ReplyTarget | null): void;
  nudgeOffline(): void;
  requestFocusCell(cellId: string): void;
  requestOpenTable(table: string): void;
}

let seq = 0;
export const useAgentUi = create<AgentUiState>()((set) => ({
  askAgent: false,
  replyTo: null,
  offlineNudge: 0,
  focusCell: null,
  openTable: null,
  setAskAgent: (askAgent) => set({ askAgent }),
  setReplyTo: (replyTo) => set({ replyTo }),
  nudgeOffline: () => set((s) => ({ offlineNudge: s.offlineNudge + 1 })),
  requestFocusCell: (target) => set({ focusCell: { target, n: ++seq } }),
  requestOpenTable: (target) => set({ openTable: { target, n: ++seq } }),
}));
