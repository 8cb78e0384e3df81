/**
 * The atlas's projections on data with a known answer: three well separated Gaussian clusters in
 * 6-D stay separated in 2-D under PCA and UMAP (also when UMAP fits on a sample and places the
 * rest); TF-IDF + SVD separates two topics of short texts and labels them with their words; the
 * k-means labels name the column that distinguishes a cluster; a seed gives the same map twice;
 * missing values get the column mean; bad input ends in a clear error. Also the naming of a map's
 * tables, the columns a map reads, and the points' response body (the format: shared/test/atlas-points-format.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { project, ProjectionError } from '../../src/atlas/projection.ts';
import { nearestCentroidAccuracy } from '../../src/atlas/evaluate.ts';
import { KdTree } from '../../src/atlas/kd-tree.ts';
import { fillMissing, pca, standardise } from '../../src/atlas/numeric-projection.ts';
import { tfidf, tokenize } from '../../src/atlas/text-projection.ts';
import { gaussian, seededRandom } from '../../src/atlas/seeded-random.ts';
import { chooseMapTableName, selectionTableName, sourceColumnName } from '../../src/atlas/table-names.ts';
import { pickColumns } from '../../src/atlas/source-columns.ts';
import { decodePoints } from '@plexus/shared';
import { pointsBody } from '../../src/atlas/atlas-tables.ts';

/** `per` rows of each of three Gaussian blobs (SD 1) in `dims` dimensions, centres 10 apart on different axes. */
function blobs(per: number, dims: number, seed: number): { columns: Float64Array[]; truth: Int32Array } {
  const rand = seededRandom(seed);
  const n = 3 * per;
  const columns = Array.from({ length: dims }, () => new Float64Array(n));
  const truth = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const c = i % 3;
    truth[i] = c;
    for (let d = 0; d < dims; d++) columns[d]![i] = gaussian(rand) + (d === c ? 10 : 0) + (d === c + 3 ? -10 : 0);
  }
  return { columns, truth };
}


const names6 = ['a', 'b', 'c', 'd', 'e', 'f'];

describe('numeric maps', () => {
  for (const seed of [1, 2]) {
    it(`PCA keeps three separated 6-D clusters apart (seed ${seed})`, () => {
      const { columns, truth } = blobs(200, 6, seed);
      const p = project({ method: 'pca', names: names6, columns }, { seed });
      expect(nearestCentroidAccuracy(p.x, p.y, truth, 3)).toBeGreaterThanOrEqual(0.95);
      expect(p.how).toMatch(/^PCA of 6 numeric columns \(standardised\): PC1 \d+ %, PC2 \d+ % of the variance/);
      expect(p.labels.length).toBe(3);
    });

    it(`UMAP keeps three separated 6-D clusters apart (seed ${seed})`, () => {
      const { columns, truth } = blobs(150, 6, seed);
      const p = project({ method: 'umap', names: names6, columns }, { seed });
      expect(nearestCentroidAccuracy(p.x, p.y, truth, 3)).toBeGreaterThanOrEqual(0.95);
      expect(p.how).toContain('UMAP of 6 numeric columns (standardised)');
      expect(p.how).not.toContain('sample');
    });
  }

  it('UMAP of a table larger than its fit sample places the other rows among their neighbours and says so', () => {
    const { columns, truth } = blobs(300, 6, 3);
    const p = project({ method: 'umap', names: names6, columns }, { seed: 3, umapFitRows: 300 });
    expect(p.x.every(Number.isFinite) && p.y.every(Number.isFinite)).toBe(true);
    expect(nearestCentroidAccuracy(p.x, p.y, truth, 3)).toBeGreaterThanOrEqual(0.95);
    expect(p.how).toContain('fit on a random sample of 300 of 900 rows, the other 600 placed at the weighted mean of their 10 nearest sampled rows');
  });

  it('is deterministic for a seed, and a different seed gives a different UMAP', () => {
    const { columns } = blobs(60, 6, 4);
    const a = project({ method: 'umap', names: names6, columns }, { seed: 7 });
    const b = project({ method: 'umap', names: names6, columns }, { seed: 7 });
    const c = project({ method: 'umap', names: names6, columns }, { seed: 8 });
    expect(Array.from(a.x)).toEqual(Array.from(b.x));
    expect(Array.from(a.y)).toEqual(Array.from(b.y));
    expect(Array.from(a.cluster)).toEqual(Array.from(b.cluster));
    expect(a.labels).toEqual(b.labels);
    expect(Array.from(a.x)).not.toEqual(Array.from(c.x));
    const p1 = project({ method: 'pca', names: names6, columns });
    const p2 = project({ method: 'pca', names: names6, columns });
    expect(Array.from(p1.x)).toEqual(Array.from(p2.x));
  });

  it('k-means labels name the column that distinguishes each cluster', () => {
    const rand = seededRandom(11);
    const n = 600;
    const snr = new Float64Array(n);
    const area = new Float64Array(n);
    const depth = new Float64Array(n);
    const group = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      const g = i % 3; // 0: high snr, 1: large area, 2: deep
      group[i] = g;
      snr[i] = 5 + gaussian(rand) + (g === 0 ? 12 : 0);
      area[i] = 100 + 10 * gaussian(rand) + (g === 1 ? 120 : 0);
      depth[i] = 200 + 5 * gaussian(rand) + (g === 2 ? 60 : 0);
    }
    const p = project({ method: 'pca', names: ['snr', 'area_px', 'depth_um'], columns: [snr, area, depth] });
    expect(p.labels.length).toBe(3);
    const labelOf = (g: number) => {
      const counts = new Map<number, number>();
      group.forEach((gg, i) => gg === g && counts.set(p.cluster[i]!, (counts.get(p.cluster[i]!) ?? 0) + 1));
      const c = [...counts.entries()].sort((a, b) => b[1] - a[1])[0]![0];
      return p.labels.find((l) => l.cluster === c)!.text;
    };
    expect(labelOf(0)).toMatch(/^high snr/);
    expect(labelOf(1)).toMatch(/^high area_px/);
    expect(labelOf(2)).toMatch(/^high depth_um/);
    // Labels sit at their cluster's centre and count its points, largest first.
    const sizes = p.labels.map((l) => l.size);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(n);
    expect([...sizes].sort((a, b) => b - a)).toEqual(sizes);
    const c0 = p.labels[0]!;
    const members = Array.from(p.cluster).map((c, i) => [c, i] as const).filter(([c]) => c === 0).map(([, i]) => i);
    expect(c0.x).toBeCloseTo(members.reduce((s, i) => s + p.x[i]!, 0) / members.length, 6);
  });

  it('fills missing values (NaN, ±Infinity) with the column mean and says how many', () => {
    const { columns } = blobs(30, 3, 5);
    columns[0]![4] = NaN;
    columns[1]![7] = Infinity;
    columns[2]![9] = -Infinity;
    const filled = fillMissing(columns);
    expect(filled.filled).toBe(3);
    const meanOf = (c: Float64Array, skip: number) => Array.from(c).filter((_, i) => i !== skip).reduce((a, b) => a + b, 0) / (c.length - 1);
    expect(filled.columns[0]![4]).toBeCloseTo(meanOf(columns[0]!, 4), 10);
    const p = project({ method: 'pca', names: ['a', 'b', 'c'], columns });
    expect(p.x.every(Number.isFinite) && p.y.every(Number.isFinite)).toBe(true);
    expect(p.how).toContain('3 missing values filled with the column mean');
    const cols = project({ method: 'columns', names: ['a', 'b'], columns: [columns[0]!, columns[1]!] });
    expect(cols.x[4]).toBeCloseTo(filled.columns[0]![4]!, 10);
    expect(cols.x[0]).toBe(columns[0]![0]);
    expect(cols.y[7]).toBeCloseTo(filled.columns[1]![7]!, 10);
    expect(cols.how).toMatch(/^x = "a", y = "b" as given; 2 missing values filled/);
  });

  it('refuses what it cannot map, with a clear message', () => {
    const one = new Float64Array([1, 2, 3]);
    expect(() => project({ method: 'pca', names: ['a'], columns: [one] })).toThrow(/PCA needs at least two numeric columns/);
    expect(() => project({ method: 'columns', names: ['a', 'b', 'c'], columns: [one, one, one] })).toThrow(/needs two columns, x and y/);
    expect(() => project({ method: 'pca', names: ['a', 'b'], columns: [one, new Float64Array([NaN, NaN, NaN])] })).toThrow(ProjectionError);
    expect(() => project({ method: 'umap', names: ['a', 'b'], columns: [new Float64Array(20).fill(1), new Float64Array(20).fill(2)] })).toThrow(/every column is constant/);
    // Too few rows for UMAP: PCA, said so.
    const small = project({ method: 'umap', names: ['a', 'b'], columns: [new Float64Array([1, 2, 3, 4]), new Float64Array([4, 1, 3, 2])] });
    expect(small.how).toContain('PCA instead');
  });

  it('standardises to mean 0 and SD 1, and PCA explains the variance in order', () => {
    const { columns } = blobs(100, 6, 6);
    const z = standardise(columns).columns;
    for (const c of z) {
      const mean = c.reduce((a, b) => a + b, 0) / c.length;
      const sd = Math.sqrt(c.reduce((a, b) => a + (b - mean) ** 2, 0) / (c.length - 1));
      expect(mean).toBeCloseTo(0, 10);
      expect(sd).toBeCloseTo(1, 10);
    }
    const r = pca(z, 3);
    expect(r.explained[0]!).toBeGreaterThanOrEqual(r.explained[1]!);
    expect(r.explained[1]!).toBeGreaterThanOrEqual(r.explained[2]!);
  });
});

describe('text maps', () => {
  const space = ['rocket', 'orbit', 'planet', 'astronaut', 'launch', 'mars', 'telescope', 'galaxy', 'satellite', 'moon'];
  const cooking = ['recipe', 'oven', 'flour', 'butter', 'bake', 'sauce', 'garlic', 'pasta', 'onion', 'kitchen'];
  const filler = ['today', 'new', 'great', 'people', 'really', 'time'];
  function texts(per: number, seed: number): { texts: Array<string | null>; truth: Int32Array } {
    const rand = seededRandom(seed);
    const pick = (ws: string[]) => ws[Math.floor(rand() * ws.length)]!;
    const out: Array<string | null> = [];
    const truth = new Int32Array(2 * per);
    for (let i = 0; i < 2 * per; i++) {
      const topic = i % 2 ? cooking : space;
      truth[i] = i % 2;
      const words = Array.from({ length: 6 }, (_, k) => (k % 3 === 2 ? pick(filler) : pick(topic)));
      out.push(`The ${words.join(' ')}!`);
    }
    return { texts: out, truth };
  }

  it('TF-IDF + SVD separates two topics of short texts and labels them with their words', () => {
    for (const seed of [1, 2]) {
      const { texts: t, truth } = texts(150, seed);
      const p = project({ method: 'tfidf', name: 'note', texts: t }, { seed });
      expect(nearestCentroidAccuracy(p.x, p.y, truth, 2)).toBeGreaterThanOrEqual(0.95);
      expect(p.how).toMatch(/^TF-IDF of the words of "note" \(\d+ terms\) \+ truncated SVD \(centred\) to 2-D/);
      // Each topic's main cluster is labelled with words of that topic.
      for (const [g, words] of [[0, space], [1, cooking]] as const) {
        const counts = new Map<number, number>();
        truth.forEach((tt, i) => tt === g && counts.set(p.cluster[i]!, (counts.get(p.cluster[i]!) ?? 0) + 1));
        const c = [...counts.entries()].sort((a, b) => b[1] - a[1])[0]![0];
        const label = p.labels.find((l) => l.cluster === c)!.text.split(', ');
        expect(label.length).toBe(3);
        for (const w of label) expect(words).toContain(w);
      }
    }
  });

  it('tokenises words, drops stop words and numbers; rows without words sit at the centre', () => {
    expect(tokenize("The cell's ΔF/F rose 3 times in well-known V1 neurons, 2024")).toEqual(["cell's", 'δf', 'rose', 'times', 'well-known', 'v1', 'neurons']);
    const { texts: t } = texts(40, 3);
    t[5] = null;
    t[6] = 'the and of';
    const m = tfidf(t);
    expect(m.empty).toBe(2);
    const p = project({ method: 'tfidf', name: 'note', texts: t });
    expect([p.x[5], p.y[5], p.x[6], p.y[6]]).toEqual([0, 0, 0, 0]);
    expect(p.how).toContain('2 rows without words placed at the centre');
    expect(() => project({ method: 'tfidf', name: 'note', texts: ['1 2', null, 'the'] })).toThrow(/has no words to map/);
  });
});

describe('k-d tree', () => {
  it('finds the same nearest neighbours as brute force', () => {
    const rand = seededRandom(9);
    const D = 4;
    const m = 500;
    const pts = Float64Array.from({ length: m * D }, () => gaussian(rand));
    const tree = new KdTree(pts, D);
    const idx = new Int32Array(7);
    const dist = new Float64Array(7);
    for (let q = 0; q < 50; q++) {
      const query = Array.from({ length: D }, () => gaussian(rand));
      const got = tree.nearest(query, 7, idx, dist);
      expect(got).toBe(7);
      const brute = Array.from({ length: m }, (_, i) => [Math.hypot(...query.map((v, d) => v - pts[i * D + d]!)), i] as const).sort((a, b) => a[0] - b[0]).slice(0, 7);
      expect(Array.from(idx)).toEqual(brute.map(([, i]) => i));
      brute.forEach(([d], k) => expect(dist[k]).toBeCloseTo(d, 10));
    }
  });
});

describe('map tables, columns and points', () => {
  it('names a map\'s tables <table>_map, then _map_2, _map_3, skipping taken names; selection tables add _selection', () => {
    const taken = new Set<string>();
    const next = (source: string) => {
      const n = chooseMapTableName(source, (x) => taken.has(x));
      taken.add(n);
      return n;
    };
    expect(next('cells')).toBe('cells_map');
    expect(next('cells')).toBe('cells_map_2');
    taken.add('cells_map_4_selection'); // e.g. an upload of that name
    expect(next('cells')).toBe('cells_map_3');
    expect(next('cells')).toBe('cells_map_5');
    expect(selectionTableName('cells_map_2')).toBe('cells_map_2_selection');
    const long = 'a'.repeat(63);
    expect(chooseMapTableName(long, () => false)).toBe(`${'a'.repeat(46)}_map`);
    const ninetyNinth = chooseMapTableName(long, (x) => !/_99(_selection)?$/.test(x));
    expect(ninetyNinth).toBe(`${'a'.repeat(46)}_map_99`);
    expect(selectionTableName(ninetyNinth).length).toBe(63);
    expect(sourceColumnName('x')).toBe('source_x');
    expect(sourceColumnName('snr')).toBe('snr');
    expect(sourceColumnName('row', ['row'], ['row', 'source_row'])).toBe('source_source_row');
  });

  it('picks the columns a method reads, with clear errors', () => {
    const cols = [{ name: 'id', type: 'BIGINT' }, { name: 'snr', type: 'DOUBLE' }, { name: 'kind', type: 'VARCHAR' }, { name: 'area', type: 'DECIMAL(9,2)' }];
    expect(pickColumns({ method: 'pca', columns: [], table: 't' }, cols)).toEqual(['id', 'snr', 'area']);
    expect(pickColumns({ method: 'umap', columns: ['snr', 'area'], table: 't' }, cols)).toEqual(['snr', 'area']);
    expect(pickColumns({ method: 'tfidf', columns: [], table: 't' }, cols)).toEqual(['kind']);
    expect(pickColumns({ method: 'columns', columns: ['area', 'snr'], table: 't' }, cols)).toEqual(['area', 'snr']);
    expect(() => pickColumns({ method: 'pca', columns: ['snr', 'kind'], table: 't' }, cols)).toThrow('column "kind" is VARCHAR, not numeric: PCA uses numeric columns (numeric columns here: "id", "snr", "area")');
    expect(() => pickColumns({ method: 'columns', columns: ['snr', 'nope'], table: 't' }, cols)).toThrow('table "t" has no column "nope" (its columns: "id", "snr", "kind", "area")');
    expect(() => pickColumns({ method: 'umap', columns: [], table: 't' }, cols.slice(1, 3))).toThrow('UMAP needs at least two numeric columns; table "t" has "snr"');
    expect(() => pickColumns({ method: 'tfidf', columns: ['snr'], table: 't' }, cols)).toThrow('column "snr" is DOUBLE, not text');
    expect(() => pickColumns({ method: 'tfidf', columns: [], table: 't' }, cols.slice(0, 2))).toThrow('table "t" has no text column');
    expect(() => pickColumns({ method: 'pca', columns: [], table: 't' }, [...cols, { name: 'RowId', type: 'BIGINT' }])).toThrow('has a column named "RowId", which hides its row numbers');
  });

  it('serves points in the shared format, as a Buffer over the encoded bytes', () => {
    const p = { x: Float32Array.of(1.5, -2), y: Float32Array.of(0.25, 3), row: Uint32Array.of(0, 7), color: Float32Array.of(NaN, 2), meta: { bounds: [-2, 0.25, 1.5, 3] as [number, number, number, number], color: { kind: 'numeric' as const, column: 'v', min: 2, max: 2 }, total: 9, sampled: false } };
    const buf = pointsBody(p);
    expect(Buffer.isBuffer(buf)).toBe(true);
    const back = decodePoints(buf);
    expect(back.meta).toEqual(p.meta);
    expect([Array.from(back.x), Array.from(back.y), Array.from(back.row), Array.from(back.color!)]).toEqual([[1.5, -2], [0.25, 3], [0, 7], [NaN, 2]]);
  });
});
