/**
 * The atlas in browser tests: a CSV with three clear numeric clusters, opening the Atlas panel, and
 * making a map of a table through the New-map form as a person does.
 */
import type { Page } from '@playwright/test';
import { expect } from './plexus.ts';

/** Rows of `clusterCsv()`: 3 clusters × 30; row i is in cluster i % 3. */
export const CLUSTER_ROWS = 90;
const CENTRES = [
  [0, 0, 0],
  [40, 0, 20],
  [20, 40, -20],
];

/** Columns id, a, b, c, kind: three clusters far apart in every numeric column, `kind` naming each (north, east, south). */
export function clusterCsv(): string {
  const lines = ['id,a,b,c,kind'];
  for (let i = 0; i < CLUSTER_ROWS; i++) {
    const k = i % 3;
    const j = Math.floor(i / 3);
    const [a, b, c] = CENTRES[k]!.map((v, d) => v + Math.sin(j * (d + 1.3)) * 1.5);
    lines.push(`${i},${a!.toFixed(3)},${b!.toFixed(3)},${c!.toFixed(3)},${['north', 'east', 'south'][k]}`);
  }
  return lines.join('\n') + '\n';
}

/** Opens the Atlas panel on each page (closing the viewer panel to make room at 1,400 px). */
export async function openAtlas(...pages: Page[]): Promise<void> {
  for (const p of pages) {
    await p.getByRole('button', { name: 'Viewer panel' }).click();
    await p.getByTestId('atlas-toggle').click();
    await expect(p.getByTestId('atlas-panel')).toBeVisible();
  }
}

export type MapMethod = { method: 'pca'; exclude?: string[]; colorBy?: string } | { method: 'columns'; x: string; y: string };

/** Makes a map of `table` in the New-map form of `page`. */
export async function createMap(page: Page, table: string, how: MapMethod): Promise<void> {
  await expect(page.getByTestId('atlas-form')).toBeVisible();
  await page.getByTestId('atlas-form-table').selectOption(table);
  await page.getByTestId(`atlas-form-method-${how.method}`).check();
  if (how.method === 'pca') {
    for (const c of how.exclude ?? []) await page.locator(`[data-testid="atlas-form-column"][value="${c}"]`).uncheck();
    if (how.colorBy) await page.getByTestId('atlas-form-color').selectOption(how.colorBy);
  } else {
    await page.getByTestId('atlas-form-x').selectOption(how.x);
    await page.getByTestId('atlas-form-y').selectOption(how.y);
  }
  await page.getByTestId('atlas-form-create').click();
}

/** Waits until each page has the map drawn with `points` points. */
export async function mapDrawn(points: number, ...pages: Page[]): Promise<void> {
  for (const p of pages) {
    await expect(p.getByTestId('atlas-status')).toHaveAttribute('data-status', 'done', { timeout: 120_000 });
    await expect(p.getByTestId('atlas-canvas')).toHaveAttribute('data-points', String(points));
  }
}
