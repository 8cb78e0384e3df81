/**
 * Suggestions under an agent message: **values** are chips that send a prepared message to the
 * agent; **actions** are buttons that do one thing in the workspace for the person who clicks
 * (as that person). Written once by the agent into the message map's `suggestions` key.
 * Pure module.
 */
import type * as Y from 'yjs';
import { findMessageMap } from '../chat.ts';
import type { Origin } from '../origin.ts';

export interface SuggestedValue {
  label: string;
  /** The message sent to the agent when the chip is clicked. */
  value: string;
}

/** What a suggested action button does; the client carries it out for the person who clicks. */
export const SUGGESTED_ACTIONS = ['run_cell', 'run_all', 'focus_cell', 'load_view', 'open_table', 'open_viewer'] as const;
export type SuggestedActionKind = (typeof SUGGESTED_ACTIONS)[number];

export interface SuggestedAction {
  label: string;
  action: SuggestedActionKind;
  /** Cell id, view name or table name, for the actions that need one. */
  target?: string;
}

export interface Suggestions {
  values: SuggestedValue[];
  actions: SuggestedAction[];
}

export const MAX_SUGGESTIONS = 6;

/** True when `a` is a suggested-action kind. */
export const isSuggestedAction = (a: unknown): a is SuggestedActionKind => (SUGGESTED_ACTIONS as readonly unknown[]).includes(a);

/** Sets the suggestions of a message (cut to MAX_SUGGESTIONS each, labels to 60 characters). */
export function setSuggestions(doc: Y.Doc, messageId: string, s: Suggestions, origin: Origin): boolean {
  const m = findMessageMap(doc, messageId);
  if (!m) return false;
  const clean: Suggestions = {
    values: s.values.slice(0, MAX_SUGGESTIONS).map((v) => ({ label: v.label.slice(0, 60), value: v.value.slice(0, 2000) })),
    actions: s.actions
      .filter((a) => isSuggestedAction(a.action))
      .slice(0, MAX_SUGGESTIONS)
      .map((a) => ({ label: a.label.slice(0, 60), action: a.action, ...(a.target ? { target: a.target.slice(0, 200) } : {}) })),
  };
  doc.transact(() => m.set('suggestions', clean), origin);
  return true;
}

/** The suggestions of a message map (empty lists when it has none). */
export function readSuggestions(m: Y.Map<unknown>): Suggestions {
  const s = m.get('suggestions') as Partial<Suggestions> | undefined;
  return {
    values: Array.isArray(s?.values) ? s.values : [],
    actions: Array.isArray(s?.actions) ? s.actions.filter((a) => isSuggestedAction(a?.action)) : [],
  };
}
