/**
 * The atlas' HTTP routes (served by the server, which computes the coordinates): the points of a
 * map in the binary format of @plexus/shared (points-format.ts), rows for tooltips, the source table's columns.
 * Effects: network.
 */
import { apiBinary, apiRequest } from '../api/http.ts';
import { decodePoints, type AtlasPoints } from '@plexus/shared';

const base = (workspaceId: string, mapId: string) => `/api/workspaces/${encodeURIComponent(workspaceId)}/atlas/${encodeURIComponent(mapId)}`;

/** The map's points (coloured by `color` when given). A 409 means the coordinates are not ready. */
export async function fetchPoints(token: string, workspaceId: string, mapId: string, color: string | null, signal?: AbortSignal): Promise<AtlasPoints> {
  const body = await apiBinary(`${base(workspaceId, mapId)}/points${color ? `?color=${encodeURIComponent(color)}` : ''}`, { token, signal, what: 'The points' });
  return decodePoints(body);
}

export interface AtlasColumn {
  name: string;
  type: string;
  numeric: boolean;
  /** Distinct values (text columns), when the server counted them. */
  distinct?: number;
  /** Whether the points can be coloured by it (numeric, or few enough categories). */
  color?: boolean;
}

export type AtlasRow = { row: number } & Record<string, unknown>;

export const fetchColumns = (token: string, workspaceId: string, mapId: string, signal?: AbortSignal) =>
  apiRequest<AtlasColumn[] | { columns: AtlasColumn[] }>(`${base(workspaceId, mapId)}/columns`, { token, signal }).then((r) => (Array.isArray(r) ? r : r.columns));

export const fetchRows = (token: string, workspaceId: string, mapId: string, rows: number[], signal?: AbortSignal) =>
  apiRequest<{ columns: Array<{ name: string; type: string }>; rows: AtlasRow[] }>(`${base(workspaceId, mapId)}/rows?rows=${rows.slice(0, 100).join(',')}`, { token, signal });

/**
 * Rows by number for tooltips, per map: each row is asked once; requests made in the same tick
 * go out together (at most 100 rows a request).
 */
export class RowCache {
  private rows = new Map<number, AtlasRow>();
  private waiting = new Map<number, Array<(r: AtlasRow | null) => void>>();
  /** Rows asked for and not yet requested. */
  private pending = new Set<number>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  columns: Array<{ name: string; type: string }> = [];

  constructor(
    private readonly token: string,
    private readonly workspaceId: string,
    private readonly mapId: string,
  ) {}

  peek(row: number): AtlasRow | undefined {
    return this.rows.get(row);
  }

  get(row: number): Promise<AtlasRow | null> {
    const hit = this.rows.get(row);
    if (hit) return Promise.resolve(hit);
    return new Promise((resolve) => {
      const list = this.waiting.get(row);
      if (list) {
        list.push(resolve);
        return;
      }
      this.waiting.set(row, [resolve]);
      this.pending.add(row);
      this.timer ??= setTimeout(() => this.flush(), 0);
    });
  }

  private flush(): void {
    this.timer = undefined;
    const ask = [...this.pending].slice(0, 100);
    ask.forEach((row) => this.pending.delete(row));
    const settle = (row: number, r: AtlasRow | null) => {
      const list = this.waiting.get(row) ?? [];
      this.waiting.delete(row);
      list.forEach((f) => f(r));
    };
    fetchRows(this.token, this.workspaceId, this.mapId, ask).then(
      (res) => {
        this.columns = res.columns;
        for (const r of res.rows) this.rows.set(Number(r.row), r);
        // Bound the cache: tooltips only.
        if (this.rows.size > 5000) this.rows = new Map([...this.rows].slice(-2500));
        for (const row of ask) settle(row, this.rows.get(row) ?? null);
      },
      () => ask.forEach((row) => settle(row, null)),
    );
    if (this.pending.size) this.timer = setTimeout(() => this.flush(), 0);
  }
}
