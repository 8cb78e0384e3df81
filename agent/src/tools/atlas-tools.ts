/**
 * Atlas tools (seed 004, shared): what the agent does on a map of a table's rows — list the maps
 * and their topics (cluster labels), statistics and samples of a region (a cluster, the shared
 * selection, a saved category or given rows), full-text search over the table's text columns
 * (MiniSearch), highlighting rows for everyone, saving rows as a category, and `analyze_cluster`:
 * a sub-agent with its own short context reads up to 80 rows of a region and returns a ~200-token
 * structured summary, so the conversation never holds raw rows it did not ask for. Several
 * `analyze_cluster` calls of one turn run in parallel. Reads go through the server's read-only
 * SQL endpoint: the map's coordinates are the table `coords.table` (`row`, `x`, `y`, `cluster`),
 * `row` being the 0-based position of a source row in the order `SELECT *` returns them.
 */
import { buildTextIndex, searchText, type TextIndex } from './text-index.ts';
import { getAtlasMap, inSelection, listAtlasMaps, selectionBoundingBox, type AtlasMapView } from '@plexus/shared';
import { actResult, ok, ToolRefusal, defineTool, type Tool, type ToolContext } from './tool.ts';

const MAP = { type: 'string', minLength: 1, maxLength: 200, description: 'Map id (see list_maps)' } as const;
const REGION = {
  type: 'object',
  description: 'Which rows: one of cluster (a cluster number of get_topics), selection: true (the shared brush), category (a saved category) or rows (row numbers).',
  properties: {
    cluster: { type: 'integer', minimum: 0 },
    selection: { type: 'boolean' },
    category: { type: 'string', minLength: 1, maxLength: 100 },
    rows: { type: 'array', maxItems: 2000, items: { type: 'integer', minimum: 0 } },
  },
  additionalProperties: false,
} as const;
type Region = { cluster?: number; selection?: boolean; category?: string; rows?: number[] };

/** Rows the analyzer sub-agent reads at most. */
export const ANALYZE_ROWS = 80;
const SAMPLE_MAX = 20;

const ident = (s: string) => `"${s.replace(/"/g, '""')}"`;

function requireMap(ctx: ToolContext, id: string): AtlasMapView & { coordsTable: string } {
  const m = getAtlasMap(ctx.doc, id);
  if (!m) throw new ToolRefusal(`there is no map "${id}" (maps: ${listAtlasMaps(ctx.doc).map((x) => `${x.id} (${x.title})`).join(', ') || 'none'})`);
  if (m.coords?.status !== 'done' || !m.coords.table) throw new ToolRefusal(`map ${id} has no coordinates yet (${m.coords?.status ?? 'not started'}${m.coords?.error ? `: ${m.coords.error}` : ''})`);
  return { ...m, coordsTable: m.coords.table };
}

/** The source rows joined with their map coordinates, as a SQL subquery `j`. */
const joined = (m: { table: string; coordsTable: string }) =>
  `(SELECT s.*, c.row AS __row, c.x AS __x, c.y AS __y, c.cluster AS __cluster FROM (SELECT (row_number() OVER ()) - 1 AS __pos, * FROM ${ident(m.table)}) s JOIN ${ident(m.coordsTable)} c ON c.row = s.__pos)`;

/** The SQL predicate for a region (the selection: its bounding box, refined with the exact shape afterwards). */
function regionPredicate(m: AtlasMapView, r: Region): { where: string; refine: ((x: number, y: number) => boolean) | null; what: string } {
  const given = [r.cluster !== undefined, !!r.selection, r.category !== undefined, r.rows !== undefined].filter(Boolean).length;
  if (given !== 1) throw new ToolRefusal('give exactly one of cluster, selection, category or rows');
  if (r.cluster !== undefined) return { where: `__cluster = ${Math.floor(r.cluster)}`, refine: null, what: `cluster ${r.cluster}` };
  if (r.rows !== undefined) return { where: r.rows.length ? `__row IN (${r.rows.map((n) => Math.floor(n)).join(',')})` : 'FALSE', refine: null, what: `${r.rows.length} given rows` };
  if (r.category !== undefined) {
    const c = m.categories[r.category];
    if (!c) throw new ToolRefusal(`map ${m.id} has no category "${r.category}" (categories: ${Object.keys(m.categories).join(', ') || 'none'})`);
    return { where: c.rows.length ? `__row IN (${c.rows.join(',')})` : 'FALSE', refine: null, what: `category "${r.category}"` };
  }
  const sel = m.selection;
  if (!sel) throw new ToolRefusal(`nobody has selected anything on map ${m.id}`);
  const b = selectionBoundingBox(sel);
  return { where: `__x BETWEEN ${b.x0} AND ${b.x1} AND __y BETWEEN ${b.y0} AND ${b.y1}`, refine: sel.kind === 'lasso' ? (x, y) => inSelection(sel, x, y) : null, what: `the selection of ${sel.name ?? sel.by}` };
}

type Row = Record<string, unknown>;

/** The rows of a region (at most `limit`, spread evenly over it), without the helper columns unless asked. */
async function regionRows(ctx: ToolContext, m: AtlasMapView & { coordsTable: string }, r: Region, limit: number): Promise<{ rows: Row[]; total: number; what: string }> {
  const p = regionPredicate(m, r);
  if (!p.refine) {
    const count = await ctx.api.query(`SELECT count(*)::INTEGER AS n FROM ${joined(m)} WHERE ${p.where}`, 1, ctx.signal);
    const total = Number(count.rows[0]?.n ?? 0);
    const step = Math.max(1, Math.floor(total / Math.max(1, limit)));
    const q = await ctx.api.query(`SELECT * EXCLUDE (__pos) FROM (SELECT *, row_number() OVER (ORDER BY __row) AS __k FROM ${joined(m)} WHERE ${p.where}) WHERE (__k - 1) % ${step} = 0 ORDER BY __row LIMIT ${limit}`, limit, ctx.signal);
    return { rows: q.rows.map(({ __k, ...rest }) => rest), total, what: p.what };
  }
  const q = await ctx.api.query(`SELECT * EXCLUDE (__pos) FROM ${joined(m)} WHERE ${p.where} ORDER BY __row`, 200, ctx.signal);
  const inside = q.rows.filter((row) => p.refine!(Number(row.__x), Number(row.__y)));
  const step = Math.max(1, Math.floor(inside.length / Math.max(1, limit)));
  return { rows: inside.filter((_, i) => i % step === 0).slice(0, limit), total: inside.length, what: `${p.what}${q.truncated ? ' (first 200 rows of its bounding box)' : ''}` };
}

const clean = (row: Row): Row => Object.fromEntries(Object.entries(row).filter(([k]) => !k.startsWith('__')).map(([k, v]) => [k, typeof v === 'string' && v.length > 300 ? v.slice(0, 299) + '…' : v]));
const rowId = (row: Row) => Number(row.__row);

const listMaps = defineTool({
  name: 'list_maps',
  description: 'The atlas maps of this workspace: id, table, how the coordinates were made, status, point count, the shared selection, the highlight and saved categories.',
  parameters: { type: 'object', properties: {}, additionalProperties: false },
  async run(ctx) {
    const maps = listAtlasMaps(ctx.doc).map((m) => ({
      id: m.id, title: m.title, table: m.table, method: m.method, columns: m.columns, status: m.coords?.status ?? 'not started', how: m.coords?.how, points: m.coords?.points,
      coordinates_table: m.coords?.table, selection_table: m.coords?.table ? `${m.coords.table}_selection` : undefined,
      selection: m.selection ? { kind: m.selection.kind, by: m.selection.name ?? m.selection.by } : null,
      highlight: m.highlight ? { label: m.highlight.label, rows: m.highlight.rows.length } : null,
      categories: Object.entries(m.categories).map(([name, c]) => ({ name, rows: c.rows.length, note: c.note })),
    }));
    return ok(`${maps.length} map${maps.length === 1 ? '' : 's'}`, { maps });
  },
});

const getTopics = defineTool({
  name: 'get_topics',
  description: "The map's clusters: number, label (what distinguishes it), size and centre.",
  parameters: { type: 'object', properties: { map: MAP }, required: ['map'], additionalProperties: false },
  async run(ctx, a) {
    const m = requireMap(ctx, a.map);
    const labels = (m.coords?.labels ?? []).map((l) => ({ cluster: l.cluster, label: l.text, rows: l.size, x: l.x, y: l.y }));
    return ok(`${labels.length} clusters`, { map: m.id, how: m.coords?.how, clusters: labels });
  },
});

const getStats = defineTool({
  name: 'get_stats',
  description: 'Statistics of a region of a map against all rows: count, and per numeric column mean, sd, min and max.',
  parameters: { type: 'object', properties: { map: MAP, region: REGION }, required: ['map', 'region'], additionalProperties: false },
  async run(ctx, a) {
    const m = requireMap(ctx, a.map);
    const p = regionPredicate(m, a.region);
    const cols = await ctx.api.query(`SELECT column_name, data_type FROM (DESCRIBE SELECT * FROM ${ident(m.table)})`, 200, ctx.signal);
    const numeric = cols.rows.filter((c) => /INT|DOUBLE|FLOAT|DECIMAL|REAL|NUMERIC/i.test(String(c.data_type))).map((c) => String(c.column_name)).slice(0, 20);
    if (!numeric.length) return ok('no numeric columns', { map: m.id, region: p.what, note: 'the table has no numeric columns; use get_sample or analyze_cluster' });
    const agg = (where: string) => `SELECT count(*)::INTEGER AS n, ${numeric.map((c, i) => `avg(${ident(c)})::DOUBLE AS m${i}, stddev_samp(${ident(c)})::DOUBLE AS s${i}, min(${ident(c)})::DOUBLE AS lo${i}, max(${ident(c)})::DOUBLE AS hi${i}`).join(', ')} FROM ${joined(m)} WHERE ${where}`;
    const [region, all] = await Promise.all([ctx.api.query(agg(p.where), 1, ctx.signal), ctx.api.query(agg('TRUE'), 1, ctx.signal)]);
    const r = region.rows[0] ?? {};
    const t = all.rows[0] ?? {};
    const round = (v: unknown) => (typeof v === 'number' ? Math.round(v * 1e4) / 1e4 : v);
    const columns = numeric.map((c, i) => ({ column: c, mean: round(r[`m${i}`]), sd: round(r[`s${i}`]), min: round(r[`lo${i}`]), max: round(r[`hi${i}`]), overall_mean: round(t[`m${i}`]), overall_sd: round(t[`s${i}`]) }));
    return ok(`${r.n ?? 0} of ${t.n ?? 0} rows (${p.what})${p.refine ? ', bounding box of the lasso' : ''}`, { map: m.id, region: p.what, rows: r.n, of: t.n, columns });
  },
});

const getSample = defineTool({
  name: 'get_sample',
  description: `Up to ${SAMPLE_MAX} rows of a region of a map, spread over it, with their row numbers.`,
  parameters: { type: 'object', properties: { map: MAP, region: REGION, n: { type: 'integer', minimum: 1, maximum: SAMPLE_MAX } }, required: ['map', 'region'], additionalProperties: false },
  async run(ctx, a) {
    const m = requireMap(ctx, a.map);
    const r = await regionRows(ctx, m, a.region, a.n ?? 10);
    return ok(`${r.rows.length} of ${r.total} rows (${r.what})`, { map: m.id, region: r.what, total: r.total, rows: r.rows.map((row) => ({ row: rowId(row), ...clean(row) })) });
  },
});

/** Full-text indexes per map, rebuilt when the coordinates change. */
const textIndexes = new Map<string, TextIndex & { key: string }>();

const textSearch = defineTool({
  name: 'text_search',
  description: 'Full-text search (BM25, prefix and fuzzy) over the text columns of a map\'s table; returns the best rows with their row numbers, cluster and a snippet.',
  parameters: { type: 'object', properties: { map: MAP, query: { type: 'string', minLength: 1, maxLength: 300 }, limit: { type: 'integer', minimum: 1, maximum: 50 } }, required: ['map', 'query'], additionalProperties: false },
  async run(ctx, a) {
    const m = requireMap(ctx, a.map);
    const key = `${m.coordsTable}@${m.coords?.at ?? 0}`;
    let idx = textIndexes.get(`${ctx.workspaceId}/${m.id}`);
    if (!idx || idx.key !== key) {
      const cols = await ctx.api.query(`SELECT column_name, data_type FROM (DESCRIBE SELECT * FROM ${ident(m.table)})`, 200, ctx.signal);
      const fields = cols.rows.filter((c) => /VARCHAR|TEXT|STRING/i.test(String(c.data_type))).map((c) => String(c.column_name)).slice(0, 10);
      if (!fields.length) throw new ToolRefusal(`table ${m.table} has no text columns`);
      ctx.progress(`indexing the text of ${m.table}`);
      const q = await ctx.api.query(`SELECT __row, __cluster, ${fields.map(ident).join(', ')} FROM ${joined(m)} ORDER BY __row`, 50_000, ctx.signal);
      idx = { key, ...buildTextIndex(q.rows, fields) };
      textIndexes.set(`${ctx.workspaceId}/${m.id}`, idx);
    }
    const rows = searchText(idx, a.query, a.limit ?? 10);
    return ok(`${rows.length} rows`, { map: m.id, rows });
  },
});

const highlightRows = defineTool({
  name: 'highlight_rows',
  description: 'Highlights rows on the map for everyone (with a label), e.g. the rows your answer talks about; an empty list clears the highlight.',
  parameters: { type: 'object', properties: { map: MAP, rows: { type: 'array', maxItems: 10_000, items: { type: 'integer', minimum: 0 } }, label: { type: 'string', maxLength: 200 } }, required: ['map', 'rows'], additionalProperties: false },
  async run(ctx, a) {
    requireMap(ctx, a.map);
    return actResult(await ctx.act('highlight_rows', { type: 'atlas_highlight', map: a.map, rows: a.rows, label: a.label ?? '' }), `highlight ${a.rows.length} rows`);
  },
});

const saveRows = defineTool({
  name: 'save_rows',
  description: 'Saves rows of a map as a named category everyone sees (count, note, your summary). Put {{category name}} in your answer to show it as a card.',
  parameters: {
    type: 'object',
    properties: { map: MAP, category: { type: 'string', minLength: 1, maxLength: 100 }, rows: { type: 'array', minItems: 1, maxItems: 10_000, items: { type: 'integer', minimum: 0 } }, note: { type: 'string', maxLength: 2000 }, summary: { type: 'string', maxLength: 2000 } },
    required: ['map', 'category', 'rows'],
    additionalProperties: false,
  },
  async run(ctx, a) {
    requireMap(ctx, a.map);
    return actResult(await ctx.act('save_rows', { type: 'atlas_save', map: a.map, category: a.category, rows: a.rows, note: a.note ?? '', ...(a.summary ? { summary: a.summary } : {}) }), `save category "${a.category}"`, { placeholder: `{{${a.category}}}` });
  },
});

const analyzeCluster = defineTool({
  name: 'analyze_cluster',
  description: `An analyzer sub-agent reads up to ${ANALYZE_ROWS} rows of a region (spread over it) with its own context and returns a short structured summary: label, themes, numeric profile, representative rows. Call it for several regions in one turn: they run in parallel.`,
  parameters: { type: 'object', properties: { map: MAP, region: REGION, question: { type: 'string', maxLength: 500 } }, required: ['map', 'region'], additionalProperties: false },
  parallel: true,
  async run(ctx, a) {
    const m = requireMap(ctx, a.map);
    const r = await regionRows(ctx, m, a.region, ANALYZE_ROWS);
    if (!r.rows.length) return ok(`no rows in ${r.what}`, { map: m.id, region: r.what, rows: 0 });
    ctx.progress(`a sub-agent reads ${r.rows.length} of ${r.total} rows (${r.what})`);
    const columns = Object.keys(clean(r.rows[0]!));
    const material = [`Rows of table ${m.table} in ${r.what} (${r.rows.length} of ${r.total}, spread over it), tab-separated; "row" is the row number.`, ['row', ...columns].join('\t'), ...r.rows.map((row) => [rowId(row), ...columns.map((c) => String(clean(row)[c] ?? ''))].join('\t'))].join('\n');
    const task = `${a.question ? `${a.question}\n` : ''}Describe this group of rows: a short label (≤ 6 words), its themes or its numeric profile (what is high or low), and 3–5 representative row numbers. Report values: label is not a number, so put "label: …; themes: …" in the summary and give the representative rows as a value "representative_rows" (comma-separated row numbers) plus any key numbers.`;
    const out = await ctx.subAgent({ task, material });
    return ok(`analysed ${r.rows.length} of ${r.total} rows (${r.what})`, { map: m.id, region: r.what, rows_total: r.total, rows_read: r.rows.length, summary: out.summary, values: out.values });
  },
});

export const atlasTools: Tool[] = [listMaps, getTopics, getStats, getSample, textSearch, highlightRows, saveRows, analyzeCluster];
