/**
 * Names of the tables a map publishes. The coordinates of a map of table `cells` are table
 * `cells_map`; a second map of `cells` gets `cells_map_2`, then `cells_map_3`, … (a name is taken
 * while another map holds it or any other table of that name is registered, e.g. an upload). Its
 * selection is `<coordinates table>_selection` (`cells_map_selection`). A map keeps its name for
 * as long as it exists. Source names are shortened to 46 characters so that every such name stays
 * a valid table name (≤ 63). The columns of a selection table are `row`, `x`, `y`, then every
 * source column; a source column named `row`, `x` or `y` is called `source_row`, `source_x`,
 * `source_y` there. Pure module.
 */

/** Longest source name kept whole in a map table's name (`<46>_map_99_selection` is 63 characters). */
const BASE_CHARS = 46;

export const selectionTableName = (coordsTable: string): string => `${coordsTable}_selection`;

/** The first of `<source>_map`, `<source>_map_2`, … that is not taken (neither it nor its selection table). */
export function chooseMapTableName(source: string, taken: (name: string) => boolean): string {
  const base = source.slice(0, BASE_CHARS);
  for (let i = 1; ; i++) {
    const name = i === 1 ? `${base}_map` : `${base}_map_${i}`;
    if (!taken(name) && !taken(selectionTableName(name))) return name;
  }
}

/** Columns the map adds to a selection table (row, x, y); source columns of these names are renamed. */
export const MAP_COLUMNS = ['row', 'x', 'y'] as const;

/** The name a source column has in a selection table (or a rows answer): `source_<name>` when it clashes with `reserved`. */
export function sourceColumnName(name: string, reserved: readonly string[] = MAP_COLUMNS, existing: readonly string[] = []): string {
  if (!reserved.includes(name)) return name;
  let out = `source_${name}`;
  while (existing.includes(out) || reserved.includes(out)) out = `source_${out}`;
  return out;
}
