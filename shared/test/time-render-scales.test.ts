import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { addLayer, layerForServedVolume, readViewerState, timeRenderScales, userOrigin, type NgLayer } from '../src/index.ts';

const origin = userOrigin('u_ana');

describe('time axes in the viewer', () => {
  it('draws a 30 Hz frame as wide as a 1 µm pixel (the t scale bar then reads seconds, not µs)', () => {
    const movie = { type: 'image', name: 'movie', source: { url: 'precomputed://x', transform: { outputDimensions: { x: [1e-6, 'm'], y: [1e-6, 'm'], t: [1 / 30, 's'] } } } } as NgLayer;
    expect(timeRenderScales(movie)!.t).toBeCloseTo(3e-5, 12);
    expect(timeRenderScales({ type: 'image', name: 'plain', source: 'precomputed://x' } as NgLayer)).toBeNull();
    expect(timeRenderScales({ type: 'image', name: 'xy', source: { url: 'precomputed://x', transform: { outputDimensions: { x: [1e-6, 'm'], y: [1e-6, 'm'] } } } } as NgLayer)).toBeNull();
  });

  it('adding the first time-series layer sets relativeDisplayScales once; a person’s own setting is kept', () => {
    const doc = new Y.Doc();
    const layer = layerForServedVolume('calcium-demo', { name: 'movie', info: { type: 'image', scales: [{ resolution: [1000, 1000, 33_333_333.333] }] }, meta: { axes: { z: 's' } } } as never, 'movie');
    addLayer(doc, layer, origin);
    const scales = readViewerState(doc).relativeDisplayScales as Record<string, number>;
    expect(Object.keys(scales)).toEqual(['t']);
    expect(scales.t).toBeCloseTo(1e-6 / (1 / 30), 9);
    const doc2 = new Y.Doc();
    doc2.getMap('viewer').set('relativeDisplayScales', { t: 0.5 });
    addLayer(doc2, layer, origin);
    expect(readViewerState(doc2).relativeDisplayScales).toEqual({ t: 0.5 });
  });
});
