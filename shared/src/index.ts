/** Public surface of @plexus/shared: the workspace document schema and its helpers. */
export * from './origin.ts';
export * from './ids.ts';
export * from './order.ts';
export * from './text-diff.ts';
export * from './schema.ts';
export * from './cells.ts';
export * from './markdown.ts';
export * from './chat.ts';
export * from './presence.ts';
export * from './protocol.ts';
export * from './undo.ts';
export * from './random.ts';
export * from './notebook/analysis.ts';
export * from './notebook/graph.ts';
export * from './notebook/outputs.ts';
export * from './notebook/runs.ts';
export * from './notebook/data.ts';
