/** The agent's part of the document: runs, actions and proposals, suggestions, prompt context. */
export * from './runs.ts';
export * from './text-merge.ts';
export * from './actions.ts';
export * from './suggestions.ts';
export * from './context.ts';
export * from './grounding.ts';
