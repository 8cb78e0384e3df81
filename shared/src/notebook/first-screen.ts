/**
 * The first screen of a notebook: its first cells as plain JSON, read from the live document on
 * the server and shown by a browser while the document itself still syncs (speed issue, gap 3:
 * what a person sees first must not wait for a 10 MB document). Read-only, bounded in size, and
 * text only: outputs become short text (streams, values, errors) or a label ("table, 120 rows");
 * the browser renders all of it as text, never as HTML.
 */
import type * as Y from 'yjs';
import { cellSource, listCells, type CellKind } from '../cells.ts';
import { readOutputs } from './runs.ts';
import { cellLanguage, readJupyterRecord } from './jupyter.ts';
import type { CellOutput } from './outputs.ts';

/** One output as the first screen shows it. */
export type FirstScreenOutput =
  | { kind: 'text'; text: string; stream?: 'stdout' | 'stderr' }
  | { kind: 'error'; text: string }
  /** Something that needs the real renderer (table, chart, image, JSON tree): a label only. */
  | { kind: 'label'; text: string };

export interface FirstScreenCell {
  id: string;
  kind: CellKind;
  /** SQL cells: the name their result is bound to. */
  name?: string;
  /** Code in a language Plexus does not run (imported from Jupyter). */
  language?: string;
  /** The source, cut at `maxSourceChars` (then `truncated`). */
  source: string;
  truncated?: true;
  outputs: FirstScreenOutput[];
}

export interface FirstScreen {
  /** Cells in the whole notebook. */
  total: number;
  cells: FirstScreenCell[];
}

export interface FirstScreenLimits {
  cells: number;
  /** Characters of source per cell. */
  sourceChars: number;
  /** Characters of text per output, and outputs per cell. */
  outputChars: number;
  outputs: number;
}

export const FIRST_SCREEN_DEFAULTS: FirstScreenLimits = { cells: 30, sourceChars: 4000, outputChars: 2000, outputs: 4 };
/** The most cells one first screen may hold, whatever a client asks for. */
export const FIRST_SCREEN_MAX_CELLS = 200;

const cut = (s: string, n: number): string => (s.length > n ? `${s.slice(0, n)}…` : s);

function describe(o: CellOutput, chars: number): FirstScreenOutput {
  switch (o.type) {
    case 'stream':
      return { kind: 'text', text: cut(o.text, chars), stream: o.name };
    case 'text':
      return { kind: 'text', text: cut(o.text, chars) };
    case 'error':
      return { kind: 'error', text: cut(`${o.name}: ${o.message}`, chars) };
    case 'table':
      return { kind: 'label', text: `table, ${o.totalRows} row${o.totalRows === 1 ? '' : 's'} × ${o.columns.length} column${o.columns.length === 1 ? '' : 's'}` };
    case 'json':
      return { kind: 'label', text: 'value (JSON)' };
    case 'chart':
      return { kind: 'label', text: 'chart' };
    case 'image':
      return { kind: 'label', text: `image (${o.mime})` };
  }
}

/** The first `limits.cells` cells of the notebook, in order (reads only; no transaction needed). */
export function readFirstScreen(doc: Y.Doc, limits: Partial<FirstScreenLimits> = {}): FirstScreen {
  const l = { ...FIRST_SCREEN_DEFAULTS, ...limits };
  const n = Math.max(0, Math.min(FIRST_SCREEN_MAX_CELLS, Math.floor(l.cells)));
  const all = listCells(doc);
  const cells = all.slice(0, n).map((view): FirstScreenCell => {
    const full = cellSource(view);
    const source = full.length > l.sourceChars ? full.slice(0, l.sourceChars) : full;
    const language = view.kind === 'code' ? cellLanguage(view) : 'javascript';
    // Imported cells in a language Plexus does not run show what they had in Jupyter; their outputs
    // need the Jupyter renderer, so the first screen only says they are there.
    const imported = language !== 'javascript' ? readJupyterRecord(view) : null;
    const outputs: FirstScreenOutput[] = imported
      ? imported.outputs.length
        ? [{ kind: 'label', text: `${imported.outputs.length} output${imported.outputs.length === 1 ? '' : 's'} from Jupyter` }]
        : []
      : readOutputs(view)
          .slice(0, l.outputs)
          .map((o) => describe(o, l.outputChars));
    return {
      id: view.id,
      kind: view.kind,
      ...(view.name !== undefined ? { name: view.name } : {}),
      ...(language !== 'javascript' ? { language } : {}),
      source,
      ...(source.length < full.length ? { truncated: true as const } : {}),
      outputs,
    };
  });
  return { total: all.length, cells };
}
