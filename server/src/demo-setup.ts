/**
 * The demo a fresh Plexus starts with: the demo workspace (seeded when the store is empty) and the
 * synthetic calcium-imaging dataset it shows (generated on a worker thread when missing or
 * outdated; /volumes/calcium-demo answers 503 "generating" meanwhile), whose ground-truth ROIs
 * become the workspace's viewer markers once they exist.
 * Effects: store, files, a worker thread.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ServerConfig } from './config.ts';
import type { Logger } from './log.ts';
import type { WorkspaceStore } from './store/workspace-store.ts';
import type { Workspaces } from './workspaces.ts';
import type { Volumes } from './volumes/volume-store.ts';
import { DEMO_DATASET } from './volumes/demo/demo-dataset.ts';
import { demoDatasetDir, ensureDemoDataset, isDemoDatasetCurrent } from './volumes/demo/ensure-demo.ts';
import { DEMO_WORKSPACE_ID, fillDemo } from './demo.ts';
import { addDemoRois } from './demo-viewer.ts';

export function setUpDemo({ config, store, workspaces, volumes, log, signal }: {
  config: ServerConfig;
  store: WorkspaceStore;
  workspaces: Workspaces;
  volumes: Volumes;
  log: Logger;
  signal: AbortSignal;
}): void {
  const seededDemo = config.seedDemo && store.list().length === 0;
  if (seededDemo) {
    workspaces.create({ id: DEMO_WORKSPACE_ID, name: 'Demo workspace', fill: fillDemo });
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
  if (seededDemo) {
    void demoData
      .then(() => fs.promises.readFile(path.join(demoDatasetDir(config.dataDir), 'tables', 'rois.csv'), 'utf8'))
      .then((csv) => workspaces.change(DEMO_WORKSPACE_ID, (doc) => addDemoRois(doc, csv)))
      .catch((e) => log.warn('could not add the demo ROIs', { err: e }));
  }
}
