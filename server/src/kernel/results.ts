/**
 * Large cell results kept on the server and fetched by id (the document holds a capped preview and
 * the id): files `<dir>/<ref>.json`, one directory per workspace, oldest removed past a byte budget.
 * Also validates what the runner sent: outputs over the per-cell cap are cut down here, whatever the
 * (untrusted) runner claimed.
 * Effects: files.
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { MAX_OUTPUT_BYTES_PER_CELL, jsonSize, type CellOutput, type Json } from '@plexus/shared';

export const RESULT_REF_PATTERN = /^res_[a-z0-9]{16}$/;

export interface StoredResult {
  kind: 'table' | 'json' | 'chart' | 'image' | 'text';
  /** table: columns + rows + totalRows; json: value; chart: spec; image: mime + data; text: text. */
  [k: string]: unknown;
}

export class ResultStore {
  constructor(
    private readonly dir: string,
    private readonly budgetBytes = 256 * 1024 * 1024,
  ) {
    fs.mkdirSync(dir, { recursive: true });
  }

  /** Stores a result and returns its id. */
  put(result: StoredResult): string {
    const ref = `res_${randomBytes(8).toString('hex')}`;
    const data = JSON.stringify(result);
    fs.writeFileSync(path.join(this.dir, `${ref}.json`), data);
    this.prune();
    return ref;
  }

  /** A stored result, or null (unknown or malformed id). */
  get(ref: string): StoredResult | null {
    if (!RESULT_REF_PATTERN.test(ref)) return null;
    try {
      return JSON.parse(fs.readFileSync(path.join(this.dir, `${ref}.json`), 'utf8')) as StoredResult;
    } catch {
      return null;
    }
  }

  /** Removes results no longer referenced. */
  drop(refs: Iterable<string>): void {
    for (const ref of refs) if (RESULT_REF_PATTERN.test(ref)) fs.rmSync(path.join(this.dir, `${ref}.json`), { force: true });
  }

  private prune(): void {
    const files = fs.readdirSync(this.dir).map((f) => {
      const st = fs.statSync(path.join(this.dir, f));
      return { f, size: st.size, t: st.mtimeMs };
    });
    let total = files.reduce((a, x) => a + x.size, 0);
    for (const x of files.sort((a, b) => a.t - b.t)) {
      if (total <= this.budgetBytes) break;
      fs.rmSync(path.join(this.dir, x.f), { force: true });
      total -= x.size;
    }
  }
}

const str = (v: unknown, max: number): string => (typeof v === 'string' ? v : String(v ?? '')).slice(0, max);

/**
 * Checks outputs from the runner (untrusted) and fits them in the per-cell budget: a table or
 * value too large for the document keeps a preview and moves whole to the result store (`full`
 * is what the runner sent for that purpose). Returns outputs safe to write.
 */
export function admitOutputs(outputs: unknown, full: unknown, store: ResultStore): { outputs: CellOutput[]; refs: string[] } {
  const refs: string[] = [];
  const list = Array.isArray(outputs) ? outputs.slice(0, 20) : [];
  const out: CellOutput[] = [];
  let budget = MAX_OUTPUT_BYTES_PER_CELL;
  for (const raw of list) {
    if (!raw || typeof raw !== 'object') continue;
    const o = raw as Record<string, unknown>;
    let item: CellOutput | null = null;
    switch (o.type) {
      case 'text':
        item = { type: 'text', text: str(o.text, 32 * 1024), ...(o.truncated ? { truncated: true } : {}) };
        break;
      case 'error':
        item = {
          type: 'error', name: str(o.name, 200), message: str(o.message, 4000),
          ...(typeof o.line === 'number' ? { line: o.line } : {}),
          ...(typeof o.column === 'number' ? { column: o.column } : {}),
          ...(typeof o.stack === 'string' ? { stack: str(o.stack, 4000) } : {}),
        };
        break;
      case 'json':
        item = { type: 'json', value: (o.value ?? null) as Json, ...(o.truncated ? { truncated: true } : {}) };
        break;
      case 'table':
        item = {
          type: 'table',
          columns: Array.isArray(o.columns) ? (o.columns as Array<{ name: unknown; type: unknown }>).slice(0, 500).map((c) => ({ name: str(c?.name, 200), type: str(c?.type, 100) })) : [],
          rows: Array.isArray(o.rows) ? (o.rows as Array<Record<string, Json>>).slice(0, 50) : [],
          totalRows: typeof o.totalRows === 'number' ? o.totalRows : 0,
        };
        break;
      case 'chart':
        item = { type: 'chart', format: o.format === 'plot' ? 'plot' : 'vega-lite', spec: (o.spec ?? null) as Json };
        break;
      case 'image':
        item = { type: 'image', mime: str(o.mime, 100), ...(typeof o.data === 'string' ? { data: o.data } : {}), ...(typeof o.width === 'number' ? { width: o.width } : {}), ...(typeof o.height === 'number' ? { height: o.height } : {}) };
        break;
    }
    if (!item) continue;
    // The runner sends the whole value for outputs it had to cut; keep it server-side by id.
    const f = full && typeof full === 'object' ? (full as Record<string, unknown>) : null;
    if (f && (item.type === 'table' || item.type === 'json' || item.type === 'chart' || item.type === 'image') && !('ref' in item && item.ref)) {
      const ref = store.put({ kind: item.type, ...f });
      refs.push(ref);
      (item as { ref?: string }).ref = ref;
    }
    let size = jsonSize(item);
    if (size > budget && item.type === 'table') {
      // Fewer preview rows until it fits.
      while (item.rows.length > 1 && size > budget) {
        item.rows = item.rows.slice(0, Math.floor(item.rows.length / 2));
        size = jsonSize(item);
      }
    }
    if (size > budget) {
      const ref = store.put({ kind: item.type === 'error' ? 'text' : item.type, ...(item as object) } as StoredResult);
      refs.push(ref);
      item = item.type === 'json' || item.type === 'chart'
        ? ({ ...item, ...(item.type === 'json' ? { value: null, truncated: true } : { spec: null }), ref } as CellOutput)
        : { type: 'text', text: `output too large for the notebook (${Math.round(size / 1024)} KiB); fetch it as result ${ref}`, truncated: true };
      size = jsonSize(item);
    }
    budget -= size;
    out.push(item);
    if (budget <= 0) break;
  }
  return { outputs: out, refs };
}

/** A row as JSON for the document (BigInt → number or string, Date → ISO). */
export function jsonRow(r: Record<string, unknown>): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const [k, v] of Object.entries(r)) {
    if (v === null || v === undefined) out[k] = null;
    else if (typeof v === 'bigint') out[k] = Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
    else if (v instanceof Date) out[k] = v.toISOString();
    else if (typeof v === 'number') out[k] = Number.isFinite(v) ? v : String(v);
    else if (typeof v === 'string' || typeof v === 'boolean') out[k] = v;
    else out[k] = JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() : x));
  }
  return out;
}

