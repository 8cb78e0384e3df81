/**
 * The shared parts of the agent's structured prompts: the task line every structured request
 * starts with (the scripted model keys its turns on it: `Task: route`, `plan`, `step`, `verify`, `summarise`),
 * the workspace instructions people wrote, and library passages with how to cite them. Pure.
 */
import type { LibraryPassage } from '@plexus/shared';

export type PromptTask = 'route' | 'plan' | 'step' | 'verify' | 'summarise';

export const taskHeader = (task: PromptTask): string => `Task: ${task}`;

/** The task of a request's system prompt (null: the conversational tool loop). */
export function promptTask(system: string): PromptTask | null {
  const m = /^Task: (route|plan|step|verify|summarise)\b/.exec(system);
  return m ? (m[1] as PromptTask) : null;
}

/** The workspace's instructions as a prompt section (empty when there are none). */
export function instructionsSection(instructions: string): string {
  const t = instructions.trim();
  return t ? `\n## Workspace instructions (written by the people in this workspace; follow them unless they conflict with the rules)\n${t}\n` : '';
}

/** A library passage (the server's search result). */
export type Passage = LibraryPassage;

/** Library passages as a prompt section with the citation rule. */
export function passagesSection(passages: Passage[]): string {
  if (!passages.length) return '';
  return [
    '\n## From the method library (cite what you use as "(from <document>)")',
    ...passages.map((p) => `### ${p.docName} — ${p.heading}\n${p.text}`),
    '',
  ].join('\n');
}
