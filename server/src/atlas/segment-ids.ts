/**
 * The segment (ROI) ids a map's chosen rows stand for: the `id` values of its selection table
 * (the rows inside the selection, as the server last wrote them) and of the source rows a
 * highlight names by number (0-based, the DuckDB rowid). Positive integers only (0 is a
 * segmentation's background), distinct, ascending, at most MAX_ATLAS_ROWS of each. Read under the
 * data-read limits with both files' turns taken (atlas-tables.ts `withAttached`).
 * Effects: DuckDB reads.
 */
import { MAX_ATLAS_ROWS } from '@plexus/shared';
import type { DataLimits } from '../data/guarded-duckdb.ts';
import { withAttached } from './atlas-tables.ts';

export async function readSegmentIds(files: { source: string; selection: string }, highlightRows: readonly number[], limits: DataLimits): Promise<{ selection: number[]; highlight: number[] }> {
  const rows = [...new Set(highlightRows.filter((r) => Number.isSafeInteger(r) && r >= 0))];
  return withAttached({ src: files.source, sel: files.selection }, limits, async (conn) => {
    const ids = async (from: string, where = 'true') =>
      (await conn.runAndReadAll(`SELECT DISTINCT TRY_CAST(id AS BIGINT) AS id FROM ${from} WHERE ${where} AND TRY_CAST(id AS BIGINT) > 0 ORDER BY id LIMIT ${MAX_ATLAS_ROWS}`))
        .getRowsJS()
        .map((r) => Number(r[0]))
        .filter(Number.isSafeInteger);
    return {
      selection: await ids('sel.data'),
      highlight: rows.length ? await ids('src.data', `rowid IN (${rows.join(',')})`) : [],
    };
  });
}
