/**
 * The files a fork needs so that its cells run without the original: the uploaded tables (and the
 * result tables of analyses and maps, which are kernel tables too) that its document registers,
 * and the large cell results its outputs point to. Volumes are not copied: datasets are the
 * server's, shared by every workspace, and a fork's viewer and cells name them as the source did.
 *
 * Tables and results are files nothing rewrites in place (a new version is a new file renamed over
 * the old one), so a fork gets hard links: instant and free of space, and later changes on either
 * side replace that side's name only. Where a link cannot be made (another file system, a file
 * system without links) the file is copied.
 * Effects: files.
 */
import fs from 'node:fs';
import path from 'node:path';
import type * as Y from 'yjs';
import { listCells, listTables, readOutputs } from '@plexus/shared';
import { RESULT_REF_PATTERN } from '../kernel/results.ts';

/** Where a workspace's kernel files live (KernelManager). */
export interface KernelDirs {
  workspaceDir(id: string): string;
  tablesDir(id: string): string;
}

const TABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** Links (or copies) `from` to `to`, keeping it read-only; false when `from` does not exist. */
function linkOrCopy(from: string, to: string): boolean {
  if (!fs.existsSync(from)) return false;
  fs.rmSync(to, { force: true });
  try {
    fs.linkSync(from, to);
  } catch {
    fs.copyFileSync(from, to);
    fs.chmodSync(to, fs.statSync(from).mode & 0o777);
  }
  return true;
}

/** The result ids (`res_…`) the outputs of a document's cells point to. */
export function resultRefs(doc: Y.Doc): string[] {
  const refs = new Set<string>();
  for (const cell of listCells(doc))
    for (const o of readOutputs(cell)) if ('ref' in o && typeof o.ref === 'string' && RESULT_REF_PATTERN.test(o.ref)) refs.add(o.ref);
  return [...refs];
}

/**
 * Gives workspace `to` the tables `doc` registers and the results its outputs point to, from
 * workspace `from` (`tablesFrom`: another directory of table files, e.g. a checkpoint's).
 * Returns what was linked.
 */
export function copyForkFiles(dirs: KernelDirs, from: string, to: string, doc: Y.Doc, tablesFrom?: string): { tables: string[]; results: number } {
  const tablesDir = dirs.tablesDir(to);
  const resultsDir = path.join(dirs.workspaceDir(to), 'results');
  for (const d of [tablesDir, resultsDir]) fs.mkdirSync(d, { recursive: true, mode: 0o755 });
  const tables: string[] = [];
  const srcTables = tablesFrom ?? dirs.tablesDir(from);
  for (const t of listTables(doc)) {
    if (TABLE_NAME.test(t.name) && linkOrCopy(path.join(srcTables, `${t.name}.duckdb`), path.join(tablesDir, `${t.name}.duckdb`))) tables.push(t.name);
  }
  let results = 0;
  const srcResults = path.join(dirs.workspaceDir(from), 'results');
  for (const ref of resultRefs(doc)) if (linkOrCopy(path.join(srcResults, `${ref}.json`), path.join(resultsDir, `${ref}.json`))) results++;
  return { tables, results };
}
