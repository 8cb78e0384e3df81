/** State links, portable volume sources and named views. */
import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import {
  jsonClone,
  listNamedViews,
  loadNamedView,
  localizeState,
  maskedLink,
  parseStateInput,
  portableState,
  readViewerState,
  replaceViewerState,
  saveNamedView,
  sourceUrls,
  stateLink,
  StateParseError,
  userOrigin,
  addAnnotations,
  splitLinks,
  roiColumns,
  roiRowCentre,
  layerForServedVolume,
  localizeSourceUrl,
  isStateLink,
  type NgState,
} from '../src/index.ts';
import { CALCIUM_STATE, MULTI_LAYER_STATE } from './fixtures/ng-states.ts';

const o = userOrigin('alice');

describe('state links', () => {
  it('a link built for a host parses back to the same state', () => {
    const link = stateLink(MULTI_LAYER_STATE, 'https://ng.example.org/');
    expect(link.startsWith('https://ng.example.org/#!')).toBe(true);
    // Characters that would end or split a URL fragment are encoded.
    expect(link.slice(link.indexOf('#') + 1)).not.toMatch(/[#?\s]/);
    expect(parseStateInput(link)).toEqual({ kind: 'state', state: MULTI_LAYER_STATE });
  });

  it('reads raw JSON, unencoded fragments and remote-state fragments', () => {
    const json = JSON.stringify(CALCIUM_STATE);
    expect(parseStateInput(`  ${json}\n`)).toEqual({ kind: 'state', state: CALCIUM_STATE });
    expect(parseStateInput(`https://h/#!${json}`)).toEqual({ kind: 'state', state: CALCIUM_STATE });
    expect(parseStateInput('https://h/#!gs://bucket/state.json')).toEqual({ kind: 'remote', url: 'gs://bucket/state.json' });
  });

  it.each([
    ['', /nothing to import/],
    ['{"layers": [', /not valid JSON/],
    ['[1,2]', /neither state JSON nor a Neuroglancer link|must be a JSON object/],
    ['https://example.org/page', /neither state JSON/],
    ['https://h/#!', /no state/],
    ['https://h/#!%7B%22a%22', /not valid JSON/],
  ])('refuses %j with a clear error', (input, msg) => {
    expect(() => parseStateInput(input)).toThrow(StateParseError);
    expect(() => parseStateInput(input)).toThrow(msg);
  });

  it('masks a link as short markdown', () => {
    expect(maskedLink('https://ng.example.org/#!{"x":1}')).toBe('[Neuroglancer view (ng.example.org)](https://ng.example.org/#!{"x":1})');
  });
});

describe('portable volume sources', () => {
  it('local volumes are stored without the origin and load from any origin', () => {
    const here = localizeState(CALCIUM_STATE, 'http://10.0.0.5:4455');
    expect(sourceUrls(here)).toContain('precomputed://http://10.0.0.5:4455/volumes/calcium-demo/movie');
    expect(portableState(here, 'http://10.0.0.5:4455/')).toStrictEqual(CALCIUM_STATE);
    // Other servers' URLs are left alone.
    expect(sourceUrls(portableState(MULTI_LAYER_STATE, 'http://10.0.0.5:4455'))).toEqual(sourceUrls(MULTI_LAYER_STATE));
  });
});

describe('named views', () => {
  it('saving and loading a view restores camera and display but keeps annotations added since', () => {
    const doc = new Y.Doc();
    replaceViewerState(doc, jsonClone(MULTI_LAYER_STATE), o);
    const id = saveNamedView(doc, 'overview', readViewerState(doc), 'Alice', o);
    const moved = jsonClone(readViewerState(doc)) as any;
    moved.position = [0, 0, 0];
    moved.layers[0].shaderControls.normalized.range = [0, 1];
    moved.layers[1].visible = true;
    replaceViewerState(doc, moved, o);
    addAnnotations(doc, 'notes', [{ type: 'point', point: [1, 1, 1] }], o);
    const view = listNamedViews(doc).find((v) => v.id === id)!;
    expect(view.name).toBe('overview');
    loadNamedView(doc, view, o);
    const s = readViewerState(doc) as any;
    expect(s.position).toEqual(MULTI_LAYER_STATE.position);
    expect(s.layers[0].shaderControls.normalized.range).toEqual([40, 220]);
    expect(s.layers[1].visible).toBe(false);
    expect(s.layers[2].annotations).toHaveLength(5);
  });
});

describe('links in chat text', () => {
  it('masks Neuroglancer state links and keeps the rest of the text', () => {
    const link = stateLink(CALCIUM_STATE, 'https://ng.example.org/');
    const segs = splitLinks(`Look at this: ${link} and tell me.`);
    expect(segs).toEqual([
      { kind: 'text', text: 'Look at this: ' },
      { kind: 'link', url: link, label: 'Neuroglancer view (ng.example.org)', neuroglancer: true },
      { kind: 'text', text: ' and tell me.' },
    ]);
  });

  it('reads markdown links (as maskedLink writes them) and bare URLs with sentence punctuation', () => {
    const url = 'https://h.org/#!%7B%22layers%22%3A%5B%5D%7D';
    expect(splitLinks(maskedLink(url, 'ROI 12'))).toEqual([{ kind: 'link', url, label: 'ROI 12 (h.org)', neuroglancer: true }]);
    expect(splitLinks('see https://example.org/paper.')).toEqual([
      { kind: 'text', text: 'see ' },
      { kind: 'link', url: 'https://example.org/paper', label: 'https://example.org/paper', neuroglancer: false },
      { kind: 'text', text: '.' },
    ]);
    expect(splitLinks('no links here')).toEqual([{ kind: 'text', text: 'no links here' }]);
    expect(isStateLink('https://h.org/#section')).toBe(false);
  });
});

describe('state links pasted with raw (unencoded) JSON', () => {
  // As copied from a browser's address bar: quotes, brackets, even spaces and parentheses inside
  // strings (layer names, shaders) are not encoded.
  const state: NgState = {
    layers: [
      { type: 'image', source: 'precomputed://gs://bucket/em', name: 'EM (raw) 50%41', shader: 'void main() { emitGrayscale(toNormalized(getDataValue())); }' },
      { type: 'segmentation', source: 'precomputed://gs://bucket/seg', name: 'seg', segments: ['12', '"quoted"'] },
    ],
    position: [10, 20.5, 30],
    layout: '4panel',
  };
  const raw = `https://ng.example.org/#!${JSON.stringify(state)}`;
  const encoded = stateLink(state, 'https://ng.example.org/');

  it('is recognised whole, alone or surrounded by text, and parses to the state', () => {
    for (const [before, after] of [['', ''], ['Look at this: ', ' and tell me.'], ['(see ', ')'], ['see ', '. Thanks!']] as const) {
      const segs = splitLinks(`${before}${raw}${after}`);
      expect(segs, `${before}…${after}`).toEqual([
        ...(before ? [{ kind: 'text', text: before }] : []),
        { kind: 'link', url: raw, label: 'Neuroglancer view (ng.example.org)', neuroglancer: true },
        ...(after ? [{ kind: 'text', text: after }] : []),
      ]);
      expect(parseStateInput((segs.find((x) => x.kind === 'link') as { url: string }).url)).toEqual({ kind: 'state', state });
    }
  });

  it('raw, encoded and markdown links side by side are each taken whole', () => {
    const md = `[ROI 12](${raw})`;
    const segs = splitLinks(`raw ${raw}\nencoded ${encoded} and ${md}, done`);
    expect(segs.filter((x) => x.kind === 'link')).toEqual([
      { kind: 'link', url: raw, label: 'Neuroglancer view (ng.example.org)', neuroglancer: true },
      { kind: 'link', url: encoded, label: 'Neuroglancer view (ng.example.org)', neuroglancer: true },
      { kind: 'link', url: raw, label: 'ROI 12', neuroglancer: true },
    ]);
    expect(segs.filter((x) => x.kind === 'text').map((x) => (x as { text: string }).text)).toEqual(['raw ', '\nencoded ', ' and ', ', done']);
    for (const l of segs) if (l.kind === 'link') expect(parseStateInput(l.url)).toEqual({ kind: 'state', state });
  });

  it('a raw link whose JSON never closes stays as it was (cut at the quote), and says why it does not parse', () => {
    const cut = 'https://h.org/#!{"layers":[{"name":"a"}';
    const segs = splitLinks(`${cut}\nnext line }`);
    expect(segs[0]).toEqual({ kind: 'link', url: 'https://h.org/#!{', label: 'Neuroglancer view (h.org)', neuroglancer: true });
    expect(() => parseStateInput(cut)).toThrow(StateParseError);
  });

  it('a partly encoded fragment still parses', () => {
    expect(parseStateInput('https://h.org/#!{%22layers%22:[]}')).toEqual({ kind: 'state', state: { layers: [] } });
  });
});

describe('layers for served volumes', () => {
  it('a movie gets a time axis; a plane spans the recording; other volumes keep their native axes', () => {
    const movie = layerForServedVolume('calcium-demo', { name: 'movie', info: { type: 'image', scales: [{ resolution: [1000, 1000, 33333333] }] }, meta: { axes: { x: 'µm', y: 'µm', z: 's' } } });
    expect(movie).toEqual({
      type: 'image', name: 'movie',
      source: { url: 'precomputed://plexus://volumes/calcium-demo/movie', transform: { outputDimensions: { x: [1e-6, 'm'], y: [1e-6, 'm'], t: [0.033333333, 's'] } } },
    });
    const labels = layerForServedVolume('calcium-demo', { name: 'labels', info: { type: 'segmentation', scales: [{ resolution: [1000, 1000, 29999999700] }] }, meta: { axes: { x: 'µm', y: 'µm', z: 'none' } } });
    expect(labels.type).toBe('segmentation');
    expect((labels.source as any).transform.outputDimensions.t[0]).toBeCloseTo(30, 5);
    expect(layerForServedVolume('em', { name: 'raw data', info: { type: 'image' } })).toEqual({ type: 'image', name: 'raw data', source: 'precomputed://plexus://volumes/em/raw%20data' });
    // Portable: the page's origin is filled in when the viewer loads it.
    expect(localizeSourceUrl('precomputed://plexus://volumes/em/raw%20data', 'http://lab:4455')).toBe('precomputed://http://lab:4455/volumes/em/raw%20data');
  });
});

describe('ROI tables', () => {
  it('finds position and label columns, and row centres', () => {
    const cols = roiColumns([{ name: 'id' }, { name: 'centroid_x' }, { name: 'centroid_y' }, { name: 'area_px' }, { name: 'snr' }]);
    expect(cols).toEqual({ x: 'centroid_x', y: 'centroid_y', label: 'id' });
    expect(roiRowCentre({ id: 3, centroid_x: 12.5, centroid_y: '40' }, cols!)).toEqual([12.5, 40, null]);
    expect(roiRowCentre({ id: 3, centroid_x: null, centroid_y: 1 }, cols!)).toBeNull();
    expect(roiColumns([{ name: 'X' }, { name: 'Y' }, { name: 'Z' }])).toEqual({ x: 'X', y: 'Y', z: 'Z' });
    expect(roiColumns([{ name: 'area' }, { name: 'snr' }])).toBeNull();
  });
});
