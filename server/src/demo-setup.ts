/**
 * The demo a fresh Plexus starts with: the demo workspace (seeded when the store is empty) and the
 * synthetic calcium-imaging dataset it shows (generated on a worker thread when missing or
 * outdated; /volumes/calcium-demo answers 503 "generating" meanwhile), whose ground-truth ROIs
 * become the workspace's viewer markers once they exist, and its table `demo_neurons` with a map
 * of it (demo-atlas.ts; with a kernel only: tables are kernel tables).
 * Effects: store, files, a worker thread.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ServerConfig } from './config.ts';
import type { Logger } from './log.ts';
import type { WorkspaceStorage } from './store/storage.ts';
import type { Workspaces } from './workspaces.ts';
import type { Volumes } from './volumes/volume-store.ts';
import { DEMO_DATASET } from './volumes/demo/demo-dataset.ts';
import { demoDatasetDir, ensureDemoDataset, isDemoDatasetCurrent } from './volumes/demo/ensure-demo.ts';
import { DEMO_WORKSPACE_ID, fillDemo } from './demo.ts';
import { addDemoRois } from './demo-viewer.ts';

/** Seeds the demo workspace (resolved once it exists); `settled` resolves once its markers and atlas are in. */
export async function setUpDemo({ config, store, workspaces, volumes, log, signal, atlas }: {
  config: ServerConfig;
  store: WorkspaceStorage;
  workspaces: Workspaces;
  volumes: Volumes;
  log: Logger;
  signal: AbortSignal;
  /** Adds the demo's table and map to a workspace (demo-atlas.ts), or null without a kernel. */
  atlas: ((ws: string) => Promise<void>) | null;
}): Promise<{ settled: Promise<void> }> {
  const seededDemo = config.seedDemo && (await store.list()).length === 0;
  if (seededDemo) {
    await workspaces.create({ id: DEMO_WORKSPACE_ID, name: 'Demo workspace', fill: fillDemo });
    log.info('seeded the demo workspace', { ws: DEMO_WORKSPACE_ID });
  }
  let demoData: Promise<unknown> = Promise.resolve();
  if (config.seedDemo && !isDemoDatasetCurrent(config.dataDir, config.demoData)) {
    const work = ensureDemoDataset(config.dataDir, log, { ...config.demoData, worker: true, signal });
    work.catch((e) => {
      if (!signal.aborted) log.error('could not generate the demo dataset', { err: e });
    });
    volumes.track(DEMO_DATASET, work);
    demoData = work;
  }
  if (!seededDemo) return { settled: Promise.resolve() };
  // Resolves once the demo's markers and atlas are in (or could not be added): shutdown waits for it.
  const settled = demoData
    .then(() => fs.promises.readFile(path.join(demoDatasetDir(config.dataDir), 'tables', 'rois.csv'), 'utf8'))
    .then((csv) => workspaces.change(DEMO_WORKSPACE_ID, (doc) => addDemoRois(doc, csv)))
    .catch((e) => log.warn('could not add the demo ROIs', { err: e }))
    .then(() => demoData)
    .then(() => (atlas && !signal.aborted ? atlas(DEMO_WORKSPACE_ID) : undefined))
    .catch((e) => {
      if (!signal.aborted) log.warn('could not add the demo atlas', { err: e });
    });
  return { settled };
}
