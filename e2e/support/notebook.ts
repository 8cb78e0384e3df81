/**
 * Notebook helpers for the browser tests: typing a cell's whole source, reading a cell's run
 * state and outputs from the DOM, and uploading a generated file by drag-and-drop or through the
 * file picker, as a person would. Everything waits on the app's real state.
 */
import type { Locator, Page } from '@playwright/test';
import { ALICE, BOB, cellLocator, codeContent, openWorkspace, type Actor, type Actors, type CellSeed, type Plexus, type Workspace } from './plexus.ts';

/** Replaces a code/SQL cell's text by typing (select all, then insert). */
export async function setCellCode(page: Page, cellId: string, text: string): Promise<void> {
  const editor = codeContent(page, cellId);
  await editor.click();
  await page.keyboard.press('Control+A');
  await page.keyboard.insertText(text);
}

/** The cell's run state as shown (`data-state` of `cell-status`). */
export const cellState = (page: Page, cellId: string): Promise<string | null> =>
  cellLocator(page, cellId).getByTestId('cell-status').getAttribute('data-state');

/** Outputs of a cell, by test id (`output-text`, `output-table`, `output-error`, …). */
export const output = (page: Page, cellId: string, testId: string): Locator => cellLocator(page, cellId).getByTestId(testId);

/** Texts of a cell's text outputs. */
export const textOutputs = (page: Page, cellId: string): Promise<string[]> => output(page, cellId, 'output-text').allTextContents();

/** Drops a file (generated in the test) on the notebook, as dragging it from the desktop does. */
export async function dropFile(page: Page, name: string, content: string, mime = 'text/csv'): Promise<void> {
  const dataTransfer = await page.evaluateHandle(
    ({ name, content, mime }) => {
      const g = globalThis as any;
      const dt = new g.DataTransfer();
      dt.items.add(new g.File([content], name, { type: mime }));
      return dt;
    },
    { name, content, mime },
  );
  const zone = page.getByTestId('data-dropzone');
  await zone.dispatchEvent('dragenter', { dataTransfer });
  await zone.dispatchEvent('dragover', { dataTransfer });
  await zone.dispatchEvent('drop', { dataTransfer });
}

/** Chooses a file (generated in the test) in the data panel's file picker. */
export async function pickFile(page: Page, name: string, content: string, mimeType = 'text/csv'): Promise<void> {
  if ((await page.getByTestId('data-panel').count()) === 0) await page.getByTestId('data-toggle').click();
  await page.getByTestId('data-file-input').setInputFiles({ name, mimeType, buffer: Buffer.from(content) });
}

/**
 * A workspace seeded with `cells`, opened by alice (owner link) and bob (an editor share link),
 * each in their own browser context, both live.
 */
export async function aliceAndBob(plexus: Plexus, actor: Actors, name: string, cells: CellSeed[]): Promise<{ workspace: Workspace; cellIds: string[]; alice: Actor; bob: Actor }> {
  const { workspace, cellIds } = await plexus.createWorkspace(name, cells);
  const bobLink = await plexus.share(workspace.id, 'editor');
  const alice = await actor(ALICE);
  const bob = await actor(BOB);
  await openWorkspace(alice.page, plexus, workspace.id);
  await openWorkspace(bob.page, plexus, workspace.id, bobLink.token);
  return { workspace, cellIds, alice, bob };
}
