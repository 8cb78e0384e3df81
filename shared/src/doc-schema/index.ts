/** The workspace document's schema: its vocabulary, its declaration and its enforcement. */
export * from './spec.ts';
export * from './workspace-schema.ts';
export * from './check.ts';
export * from './repair.ts';
export type * from './helper-types.ts';
export * from './precheck.ts';
