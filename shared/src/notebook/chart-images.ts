/** Charts drawn before an export (by the server), passed to the pure report and `.ipynb` writers. */

/** Charts drawn beforehand, by output key (`chartKey`): an SVG, or why it could not be drawn. */
export type ChartImages = ReadonlyMap<string, { svg: string } | { error: string }>;

/** The key of a cell's `index`-th output in `ChartImages`. */
export const chartKey = (cellId: string, index: number): string => `${cellId}:${index}`;
