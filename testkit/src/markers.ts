/**
 * Acknowledged-edit bookkeeping for durability tests: clients type unique markers into their own
 * code cells in bursts, and a burst counts as acknowledged once the client's provider has no
 * unsynced changes after typing it (the server's SyncStatus acknowledgement). After the server is
 * killed and restarted, a fresh client must find every acknowledged marker exactly once and no
 * marker more than once (`checkMarkers`).
 */
import { cellSource, createCell, getCell, insertCellText, listCells, userOrigin, type CellId } from '@plexus/shared';
import type * as Y from 'yjs';
import type { HpClient } from './plexus.ts';

export interface MarkerLedger {
  /** Markers whose burst the server acknowledged. */
  acked: Set<string>;
  /** Every marker typed. */
  sent: Set<string>;
}

export const newLedger = (): MarkerLedger => ({ acked: new Set(), sent: new Set() });

/** Each client's own cell (`client<i>:`), created once and found again after restarts. */
export function markerCells(clients: HpClient[]): CellId[] {
  return clients.map((c, i) => {
    const mine = listCells(c.doc).find((x) => cellSource(x).startsWith(`client${i}:`));
    return mine ? mine.id : createCell(c.doc, { kind: 'code', source: `client${i}:`, author: `c${i}` }, userOrigin(`c${i}`));
  });
}

/**
 * Starts every client typing bursts of 1–5 markers (`<r{round}c{i}n{k}>`) into its cell, waiting
 * for the acknowledgement after each burst, until `stop()` (which resolves once all have stopped).
 */
export function typeMarkers(clients: HpClient[], ledger: MarkerLedger, opts: { round: number; rand: () => number }): { stop(): Promise<void> } {
  const cells = markerCells(clients);
  let stopped = false;
  const typing = clients.map(async (c, i) => {
    let n = 0;
    while (!stopped) {
      const burst: string[] = [];
      for (let k = 1 + Math.floor(opts.rand() * 5); k > 0; k--) {
        const marker = `<r${opts.round}c${i}n${n++}>`;
        burst.push(marker);
        ledger.sent.add(marker);
        const cell = getCell(c.doc, cells[i]!);
        insertCellText(c.doc, cells[i]!, cell ? cellSource(cell).length : 0, marker, userOrigin(`c${i}`));
      }
      while (!stopped && c.provider.unsyncedChanges > 0) await new Promise((r) => setTimeout(r, 1));
      if (stopped) return;
      burst.forEach((m) => ledger.acked.add(m));
    }
  });
  return {
    stop: async () => {
      stopped = true;
      await Promise.all(typing);
    },
  };
}

const countOf = (text: string, marker: string) => text.split(marker).length - 1;

/**
 * Problems with the markers a document holds: an acknowledged marker missing or duplicated, or any
 * marker duplicated. Empty when everything is as it should be.
 */
export function checkMarkers(doc: Y.Doc, ledger: MarkerLedger): string[] {
  const text = listCells(doc).map(cellSource).join('\n');
  const problems: string[] = [];
  for (const m of ledger.acked) if (countOf(text, m) !== 1) problems.push(`acknowledged ${m} found ${countOf(text, m)} times`);
  for (const m of ledger.sent) if (!ledger.acked.has(m) && countOf(text, m) > 1) problems.push(`sent ${m} found ${countOf(text, m)} times`);
  return problems;
}
