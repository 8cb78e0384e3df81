/**
 * The demo workspace's atlas: the simulator's ground-truth neurons (the demo dataset's `rois.csv`:
 * id, centroid, area, SNR, silent, spike count, rate, peak SNR …) become workspace table
 * `demo_neurons` — its ids are the segments of the demo's `labels` layer, which its registry entry
 * says (`segmentSource`), so brushing a map of it highlights those neurons in the viewer — and a
 * map of it (UMAP of five activity features, computed by the atlas's own job) is made at once, so
 * a newcomer who opens the Atlas sees one. Once per workspace: a registered table and an existing
 * map of it are left alone. Effects: a table import, document writes (origin seed-demo).
 */
import path from 'node:path';
import type { Hocuspocus } from '@hocuspocus/server';
import { createAtlasMap, getTable, listAtlasMaps, serverOrigin } from '@plexus/shared';
import type { ServerConfig } from './config.ts';
import { withDoc } from './http/doc-access.ts';
import type { KernelManager } from './kernel/manager.ts';
import { resultTableRegistrar } from './analysis/wiring.ts';
import { DEMO_NEURONS_TABLE } from './demo.ts';
import { demoLayerSource } from './demo-viewer.ts';
import { demoDatasetDir } from './volumes/demo/ensure-demo.ts';

export { DEMO_NEURONS_TABLE };
export const DEMO_MAP_ID = 'm_demo_neurons';
/** The activity features the demo map places the neurons by. */
export const DEMO_MAP_COLUMNS = ['area_px', 'snr', 'spikes', 'rate_hz', 'peak_snr'];

const ORIGIN = serverOrigin('seed-demo');

/** Adds the demo's table and map to workspace `ws` (the demo dataset must exist). */
export function demoAtlasSeeder(deps: { config: ServerConfig; hocuspocus: Hocuspocus; kernels: KernelManager }): (ws: string) => Promise<void> {
  const register = resultTableRegistrar(deps, ORIGIN);
  const csv = path.join(demoDatasetDir(deps.config.dataDir), 'tables', 'rois.csv');
  return async (ws) => {
    const registered = await withDoc(deps.hocuspocus, ws, (doc) => getTable(doc, DEMO_NEURONS_TABLE) !== null);
    if (!registered) await register(ws, DEMO_NEURONS_TABLE, csv, { id: 'plexus', name: 'Plexus', via: 'person' }, undefined, { segmentSource: demoLayerSource('labels') });
    await withDoc(deps.hocuspocus, ws, (doc) => {
      if (listAtlasMaps(doc).some((m) => m.table === DEMO_NEURONS_TABLE)) return;
      createAtlasMap(doc, { id: DEMO_MAP_ID, table: DEMO_NEURONS_TABLE, method: 'umap', columns: DEMO_MAP_COLUMNS, title: 'Demo neurons', colorBy: 'rate_hz' }, { id: 'plexus' }, ORIGIN);
    });
  };
}
