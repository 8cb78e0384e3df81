/** The shared Neuroglancer viewer: state mapping, sources, state links, named views. Pure modules. */
export * from './state-doc.ts';
export * from './sources.ts';
export * from './state-link.ts';
export * from './views.ts';
export * from './roi-table.ts';
export * from './summary.ts';
export * from './segment-highlight.ts';
