/** The bounded viewer summary used in prompts and tool results. */
import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { jsonClone, replaceViewerState, saveNamedView, summarizeViewer, userOrigin } from '../src/index.ts';
import { CALCIUM_STATE, MULTI_LAYER_STATE } from './fixtures/ng-states.ts';

const o = userOrigin('alice');

describe('summarizeViewer', () => {
  it('describes dimensions, camera, layout, every layer and the named views', () => {
    const doc = new Y.Doc();
    replaceViewerState(doc, jsonClone(MULTI_LAYER_STATE), o);
    saveNamedView(doc, 'overview', MULTI_LAYER_STATE, 'Alice', o);
    const s = summarizeViewer(doc);
    expect(s).toContain('dimensions: x 8e-9 m, y 8e-9 m, z 4e-8 m');
    expect(s).toContain('camera: position [2914.5,3088.5,4045.5]');
    expect(s).toContain('layers (3):');
    expect(s).toContain('- image: image, opacity 0.85, source precomputed://gs://neuroglancer-public-data/flyem_fib-25/image, controls {"normalized":{"range":[40,220]');
    expect(s).toContain('- ground_truth: segmentation, hidden');
    expect(s).toContain('3 segments selected');
    expect(s).toContain('- notes: annotation, source local://annotations, 4 annotations');
    expect(s).toContain('named views: overview');
  });

  it('stays under its caps with a huge viewer', () => {
    const doc = new Y.Doc();
    const big = jsonClone(CALCIUM_STATE) as any;
    big.layers = Array.from({ length: 500 }, (_, i) => ({ type: 'image', name: `layer ${i}`, source: `precomputed://https://example.org/${'x'.repeat(200)}/${i}` }));
    replaceViewerState(doc, big, o);
    const s = summarizeViewer(doc, { maxLayers: 40, maxChars: 3000 });
    expect(s.length).toBeLessThanOrEqual(3000);
    expect(summarizeViewer(doc, { maxLayers: 5 })).toContain('… and 495 more layers');
  });
});
