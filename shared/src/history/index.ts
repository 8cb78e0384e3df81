export * from './checkpoints.ts';
export * from './changes.ts';
export * from './restore.ts';
export * from './compare.ts';
