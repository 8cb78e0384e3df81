/**
 * What a step produced or used, read from its tool calls (the cells it created, edited or ran,
 * the tables it queried, the jobs it started, the views it saved) and its report, as links people
 * can follow. Pure apart from reading the document.
 */
import type * as Y from 'yjs';
import { getCell, listCells, type ProvenanceLink } from '@plexus/shared';

type Key = `${ProvenanceLink['kind']}:${string}`;

export class ProvenanceTracker {
  private readonly seen = new Map<Key, ProvenanceLink['kind']>();

  /** Records what one tool call touched (arguments and its JSON result). */
  noteCall(tool: string, rawArgs: string, resultContent: string): void {
    const args = parse(rawArgs);
    const result = parse(resultContent);
    if (result?.ok === false) return;
    const cell = str(result?.cell_id) ?? str(args?.cell_id);
    if (cell && /^(create_cell|update_cell|replace_in_cell|run_cell|get_cell)$/.test(tool)) this.add('cell', cell);
    const job = str(result?.job) ?? str(args?.job);
    if (job && /^(start_calcium_analysis|calcium_job_status)$/.test(tool)) this.add('job', job);
    const table = str(args?.table);
    if (table && /^(preview_table|describe_table|query_table|histogram)$/.test(tool)) this.add('table', table);
    if (tool === 'save_view' && str(args?.name)) this.add('view', str(args?.name)!);
  }

  /** Records what the step's report names. */
  noteReport(r: { cells: string[]; tables: string[]; jobs: string[] }): void {
    for (const c of r.cells) this.add('cell', c);
    for (const t of r.tables) this.add('table', t);
    for (const j of r.jobs) this.add('job', j);
  }

  add(kind: ProvenanceLink['kind'], id: string): void {
    this.seen.set(`${kind}:${id}`, kind);
  }

  /** The links, with labels as people see them now (cells by number); cells that are gone are dropped. */
  links(doc: Y.Doc): ProvenanceLink[] {
    const order = new Map(listCells(doc).map((c, i) => [c.id as string, i + 1]));
    const out: ProvenanceLink[] = [];
    for (const [key, kind] of this.seen) {
      const id = key.slice(kind.length + 1);
      if (kind === 'cell') {
        if (!getCell(doc, id)) continue;
        out.push({ kind, id, label: `cell ${order.get(id) ?? '?'}` });
      } else out.push({ kind, id, label: `${kind} ${id}` });
    }
    return out.slice(0, 30);
  }
}

function parse(s: string): Record<string, unknown> | null {
  try {
    const v = JSON.parse(s) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
const str = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 && v.length <= 200 ? v : null);
