/**
 * Data tools (seed 000): list tables, preview, describe, filter/select, read-only SQL with a row
 * cap, histograms of a table column or of a served volume. All of it goes through the server's
 * read-only endpoints: the SQL runs on a DuckDB that has the workspace's tables attached read-only
 * and no access to files or the network, so a query can neither write nor reach anything else.
 */
import { getTable, listTables } from '@plexus/shared';
import { ok, ToolRefusal, defineTool, type Tool, type ToolContext } from './tool.ts';

const TABLE = { type: 'string', minLength: 1, maxLength: 63, description: 'Table name (see list_tables)' } as const;
const ROW_CAP = 200;

function requireTable(ctx: ToolContext, name: string) {
  const t = getTable(ctx.doc, name);
  if (!t) throw new ToolRefusal(`no table named "${name}" (tables: ${listTables(ctx.doc).map((x) => x.name).join(', ') || 'none'})`);
  return t;
}

const ident = (s: string) => `"${s.replace(/"/g, '""')}"`;
function literal(v: unknown): string {
  if (v === null) return 'NULL';
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new ToolRefusal('numbers must be finite');
    return String(v);
  }
  if (typeof v === 'boolean') return v ? 'TRUE' : 'FALSE';
  return `'${String(v).replace(/'/g, "''")}'`;
}

/** Rows a sub-agent reads at most for summarize_table. */
const SUMMARY_ROW_CAP = 1000;

const summarizeTableTool = defineTool({
  name: 'summarize_table',
  description:
    `Hands up to ${SUMMARY_ROW_CAP} rows of a table to a sub-agent that answers a question about them and returns a short summary with named numbers — for questions that need many rows read (patterns, outliers, a description), without filling your context with them. For exact aggregates prefer sql.`,
  parameters: {
    type: 'object',
    properties: { table: TABLE, question: { type: 'string', minLength: 1, maxLength: 500 }, max_rows: { type: 'integer', minimum: 1, maximum: SUMMARY_ROW_CAP } },
    required: ['table', 'question'],
    additionalProperties: false,
  },
  async run(ctx, a) {
    const t = requireTable(ctx, a.table);
    const limit = Math.min(a.max_rows ?? 300, SUMMARY_ROW_CAP);
    ctx.progress(`a sub-agent reads up to ${limit} rows of ${t.name}`);
    const r = await ctx.api.preview(t.name, 0, limit, ctx.signal);
    const header = r.columns.map((c) => c.name).join('\t');
    const lines = r.rows.map((row) => r.columns.map((c) => String(row[c.name] ?? '')).join('\t'));
    const material = `Table ${t.name}: ${r.totalRows} rows in all, the first ${r.rows.length} here (tab-separated).\n${header}\n${lines.join('\n')}`;
    const out = await ctx.subAgent({ task: a.question, material });
    return ok(`summarised ${r.rows.length} of ${r.totalRows} rows of ${t.name}`, { table: t.name, rows_read: r.rows.length, total_rows: r.totalRows, summary: out.summary, values: out.values });
  },
});

const listTablesTool = defineTool({
  name: 'list_tables',
  description: 'Uploaded tables: name, rows, columns with types. SQL cells and the sql tool query them by name.',
  parameters: { type: 'object', properties: {}, additionalProperties: false },
  async run(ctx) {
    const tables = listTables(ctx.doc).map((t) => ({ name: t.name, rows: t.rows, file: t.fileName, columns: t.columns }));
    return ok(`${tables.length} tables`, tables);
  },
});

const previewTool = defineTool({
  name: 'preview_table',
  description: 'Rows of a table (offset, limit ≤ 100).',
  parameters: { type: 'object', properties: { table: TABLE, offset: { type: 'integer', minimum: 0 }, limit: { type: 'integer', minimum: 1, maximum: 100 } }, required: ['table'], additionalProperties: false },
  async run(ctx, a) {
    const t = requireTable(ctx, a.table);
    const r = await ctx.api.preview(t.name, a.offset ?? 0, a.limit ?? 20, ctx.signal);
    return ok(`${r.rows.length} of ${r.totalRows} rows`, r);
  },
});

const describeTool = defineTool({
  name: 'describe_table',
  description: 'Column statistics of a table: count, nulls, distinct, min, max, mean, std, quartiles.',
  parameters: { type: 'object', properties: { table: TABLE }, required: ['table'], additionalProperties: false },
  async run(ctx, a) {
    const t = requireTable(ctx, a.table);
    return ok(`${t.columns.length} columns`, await ctx.api.describe(t.name, ctx.signal));
  },
});

const OPS = ['=', '!=', '<', '<=', '>', '>=', 'contains', 'is null', 'is not null'] as const;
const queryTableTool = defineTool({
  name: 'query_table',
  description: 'Selects columns and filters rows of a table without writing SQL: columns, where (all conditions must hold), order_by, limit (≤ 200).',
  parameters: {
    type: 'object',
    properties: {
      table: TABLE,
      columns: { type: 'array', items: { type: 'string', maxLength: 100 }, maxItems: 50 },
      where: {
        type: 'array',
        maxItems: 20,
        items: {
          type: 'object',
          properties: { column: { type: 'string', maxLength: 100 }, op: { type: 'string', enum: OPS }, value: { type: ['string', 'number', 'boolean', 'null'] } },
          required: ['column', 'op'],
          additionalProperties: false,
        },
      },
      order_by: { type: 'string', maxLength: 100 },
      descending: { type: 'boolean' },
      limit: { type: 'integer', minimum: 1, maximum: ROW_CAP },
    },
    required: ['table'],
    additionalProperties: false,
  },
  async run(ctx, a) {
    const t = requireTable(ctx, a.table);
    const known = new Set(t.columns.map((c) => c.name));
    const col = (c: string) => {
      if (!known.has(c)) throw new ToolRefusal(`table ${t.name} has no column "${c}" (columns: ${[...known].join(', ')})`);
      return ident(c);
    };
    const cols = a.columns?.length ? a.columns.map(col).join(', ') : '*';
    const conds = (a.where ?? []).map((w) => {
      const c = col(w.column);
      if (w.op === 'is null' || w.op === 'is not null') return `${c} ${w.op.toUpperCase()}`;
      if (w.value === undefined) throw new ToolRefusal(`condition on ${w.column} needs a value`);
      if (w.op === 'contains') return `CAST(${c} AS VARCHAR) ILIKE ${literal(`%${String(w.value)}%`)}`;
      return `${c} ${w.op} ${literal(w.value)}`;
    });
    const sql = `SELECT ${cols} FROM ${ident(t.name)}${conds.length ? ` WHERE ${conds.join(' AND ')}` : ''}${a.order_by ? ` ORDER BY ${col(a.order_by)}${a.descending ? ' DESC' : ''}` : ''}`;
    const r = await ctx.api.query(sql, a.limit ?? 50, ctx.signal);
    return ok(`${r.rowCount} rows${r.truncated ? ' (more exist)' : ''}`, { sql, ...r });
  },
});

const sqlTool = defineTool({
  name: 'sql',
  description: 'Runs one read-only SELECT (DuckDB dialect) over the uploaded tables and returns at most `limit` rows (≤ 200). Anything that writes, reads files or URLs, or changes settings is refused.',
  parameters: { type: 'object', properties: { query: { type: 'string', minLength: 1, maxLength: 20_000 }, limit: { type: 'integer', minimum: 1, maximum: ROW_CAP } }, required: ['query'], additionalProperties: false },
  async run(ctx, a) {
    const r = await ctx.api.query(a.query, a.limit ?? 50, ctx.signal);
    return ok(`${r.rowCount} rows${r.truncated ? ' (more exist)' : ''}`, r);
  },
});

const histogramTool = defineTool({
  name: 'histogram',
  description: 'Histogram of a numeric table column (table + column), or of the voxel values of a served volume (dataset + volume_layer; optional bbox "x0,y0,z0,x1,y1,z1" and scale).',
  parameters: {
    type: 'object',
    properties: {
      table: TABLE,
      column: { type: 'string', maxLength: 100 },
      dataset: { type: 'string', maxLength: 200 },
      volume_layer: { type: 'string', maxLength: 200 },
      bbox: { type: 'string', maxLength: 200 },
      scale: { type: 'integer', minimum: 0, maximum: 20 },
      bins: { type: 'integer', minimum: 2, maximum: 200 },
    },
    additionalProperties: false,
  },
  async run(ctx, a) {
    const bins = a.bins ?? 20;
    if (a.table) {
      const t = requireTable(ctx, a.table);
      if (!a.column) throw new ToolRefusal('give the column');
      return ok(`histogram of ${t.name}.${String(a.column)}`, await ctx.api.tableHistogram(t.name, a.column, bins, ctx.signal));
    }
    if (a.dataset && a.volume_layer) {
      const params: Record<string, string | number> = { bins };
      if (a.bbox) params.bbox = a.bbox;
      if (a.scale !== undefined) params.scale = a.scale;
      return ok(`histogram of ${String(a.dataset)}/${String(a.volume_layer)}`, await ctx.api.volumeHistogram(a.dataset, a.volume_layer, params, ctx.signal));
    }
    throw new ToolRefusal('give table and column, or dataset and volume_layer');
  },
});

export const dataTools: Tool[] = [listTablesTool, previewTool, describeTool, queryTableTool, sqlTool, histogramTool, summarizeTableTool];
