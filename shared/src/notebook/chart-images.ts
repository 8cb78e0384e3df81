/** Charts drawn before an export (by the server), passed to the pure report and `.ipynb` writers. */

/**
 * Charts drawn beforehand, by output key (`chartKey`): an SVG, or why it could not be drawn; and
 * images too large for the document, read back from the server's result store (`image`).
 */
export type DrawnOutput = { svg: string } | { error: string } | { image: { mime: string; data: string } };
export type ChartImages = ReadonlyMap<string, DrawnOutput>;

/** The key of a cell's `index`-th output in `ChartImages`. */
export const chartKey = (cellId: string, index: number): string => `${cellId}:${index}`;
