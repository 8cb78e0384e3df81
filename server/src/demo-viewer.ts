/**
 * The demo workspace's viewer: the synthetic calcium-imaging recording (movie, projections,
 * ground-truth labels) with time as the third axis, and an ROI layer filled from the dataset's
 * `rois.csv` once the dataset exists. Pure apart from document writes.
 */
import type * as Y from 'yjs';
import { addAnnotations, readLayer, replaceViewerState, serverOrigin, type JsonObject, type NgState } from '@plexus/shared';
import { DEMO_DATASET } from './volumes/demo/demo-dataset.ts';

const FRAME_S = 1 / 30;
const UM: [number, string] = [1e-6, 'm'];
/** The portable source URL of a layer of the demo dataset. */
export const demoLayerSource = (layer: string): string => `precomputed://plexus://volumes/${DEMO_DATASET}/${layer}`;
const src = demoLayerSource;
/** The movie's z (frames) becomes a time axis `t`, in seconds per frame. */
const movieTransform = { outputDimensions: { x: UM, y: UM, t: [FRAME_S, 's'] } };
/** Projections and labels are one plane whose z spans the whole recording (30 s). */
const planeTransform = { outputDimensions: { x: UM, y: UM, t: [30, 's'] } };

const lut = (lo: number, hi: number) => ({
  shader: `#uicontrol invlerp normalized(range=[${lo}, ${hi}])\nvoid main() {\n  emitGrayscale(normalized());\n}\n`,
  shaderControls: { normalized: { range: [lo, hi] } },
});

export const DEMO_ROI_LAYER = 'ROIs';

/** The demo's initial viewer state (ROIs are added by addDemoRois). */
export function demoViewerState(): NgState {
  return {
    dimensions: { x: UM, y: UM, t: [FRAME_S, 's'] },
    // One frame drawn as wide as a pixel: the time scale bar reads seconds (see timeRenderScales).
    relativeDisplayScales: { t: UM[0] / FRAME_S },
    position: [128, 128, 450],
    crossSectionScale: 0.7,
    projectionScale: 512,
    layout: 'xy',
    layers: [
      { type: 'image', name: 'movie', source: { url: src('movie'), transform: movieTransform }, ...lut(95, 260) },
      { type: 'image', name: 'mean', source: { url: src('mean'), transform: planeTransform }, ...lut(105, 200), visible: false },
      { type: 'image', name: 'max', source: { url: src('max'), transform: planeTransform }, ...lut(118, 300), visible: false },
      { type: 'segmentation', name: 'labels', source: { url: src('labels'), transform: planeTransform }, selectedAlpha: 0.35, visible: false },
      {
        type: 'annotation',
        name: DEMO_ROI_LAYER,
        // Two dimensions only: the ROI markers show on every frame.
        source: { url: 'local://annotations', transform: { outputDimensions: { x: UM, y: UM } } },
        annotationColor: '#ffcc00',
        annotations: [],
      },
    ],
  } as NgState;
}

export function fillDemoViewer(doc: Y.Doc): void {
  replaceViewerState(doc, demoViewerState(), serverOrigin('seed-demo'));
}

/**
 * Adds one point per row of `rois.csv` (id, centroid_x, centroid_y, …, snr, silent) to the ROI
 * layer, unless it already has annotations. Centroids are in pixel units with pixel centres at
 * integers; Neuroglancer's voxel i spans [i, i+1), hence the half-pixel shift. Returns how many.
 */
export function addDemoRois(doc: Y.Doc, roisCsv: string): number {
  const layer = readLayer(doc, DEMO_ROI_LAYER);
  if (!layer || (Array.isArray(layer.annotations) && layer.annotations.length > 0)) return 0;
  const [header, ...lines] = roisCsv.trim().split('\n');
  const cols = header!.split(',');
  const at = (name: string) => cols.indexOf(name);
  const rows: JsonObject[] = [];
  for (const line of lines) {
    const f = line.split(',');
    const id = f[at('id')]!;
    const x = Number(f[at('centroid_x')]);
    const y = Number(f[at('centroid_y')]);
    if (!Number.isFinite(x) || !Number.isFinite(y)) continue;
    const silent = f[at('silent')] === '1';
    rows.push({ type: 'point', id: `roi-${id}`, point: [x + 0.5, y + 0.5], description: `ROI ${id} · SNR ${f[at('snr')]}${silent ? ' · silent' : ''}` });
  }
  addAnnotations(doc, DEMO_ROI_LAYER, rows, serverOrigin('seed-demo'));
  return rows.length;
}
