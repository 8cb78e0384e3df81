/** Atlas categories named in chat answers (`{{name}}`): finding them, and their rows as SQL. Pure. */
import type { AtlasCategory, AtlasMapView } from '@plexus/shared';

/** The newest map holding a category of that name. */
export function findCategory(maps: AtlasMapView[], name: string): { map: AtlasMapView; category: AtlasCategory } | null {
  for (const map of [...maps].reverse()) {
    const category = map.categories[name];
    if (category) return { map, category };
  }
  return null;
}

/** SQL selecting a category's rows of the map's table (row numbers are positions in `SELECT *` order). */
export function categorySql(table: string, rows: number[]): string {
  const ident = `"${table.replace(/"/g, '""')}"`;
  return `SELECT * EXCLUDE (row_in_table) FROM (SELECT (row_number() OVER ()) - 1 AS row_in_table, * FROM ${ident})\nWHERE row_in_table IN (${rows.slice(0, 10_000).join(', ')})`;
}

