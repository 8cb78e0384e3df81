/**
 * The home page (workspace list) as the owner uses it: create a workspace from the UI (it opens),
 * rename it, duplicate it (the copy has its content), delete it (with confirmation). Each step is
 * checked in the list and through the API / the server's document.
 */
import type { Page } from '@playwright/test';
import { ALICE, expect, markdownContent, test, uniq, waitLive } from '../support/plexus.ts';

const row = (page: Page, name: string) =>
  page.getByTestId('workspace-row').filter({ has: page.getByTestId('workspace-open').getByText(name, { exact: true }) });

test('home: create a workspace, rename, duplicate and delete it', async ({ plexus, actor }) => {
  const alice = await actor(ALICE);
  const page = alice.page;
  await page.goto(`${plexus.url}/?token=${encodeURIComponent(plexus.ownerToken)}`);
  // The token is taken out of the address bar.
  await expect(page).toHaveURL(`${plexus.url}/`);
  await expect(page.getByRole('heading', { name: 'Workspaces' })).toBeVisible();

  // Create: the new workspace opens, with the name as its title.
  const name = `Home flow ${uniq()}`;
  await page.getByTestId('workspace-new-name').fill(name);
  await page.getByTestId('workspace-create').click();
  await expect(page).toHaveURL(/\/w\/w_[a-z0-9]+$/);
  const id = page.url().split('/w/')[1]!;
  await waitLive(page);
  await expect(page.getByTestId('workspace-title')).toHaveValue(name);
  // Give it some content, to check the duplicate later.
  await page.getByTestId('add-markdown').click();
  await expect(page.getByTestId('cell')).toHaveCount(1);
  const cellId = (await page.getByTestId('cell').getAttribute('data-cell-id'))!;
  await markdownContent(page, cellId).click();
  await page.keyboard.type('Notes worth copying');
  await expect.poll(async () => (await plexus.snapshot(id)).cells.map((c) => c.text)).toEqual(['Notes worth copying']);

  // Back to the list (header brand link): the workspace is there.
  await page.getByTitle('All workspaces').click();
  await expect(page).toHaveURL(`${plexus.url}/`);
  await expect(row(page, name)).toHaveCount(1);
  await expect(row(page, name)).toHaveAttribute('data-workspace-id', id);

  // Rename.
  const renamed = `Renamed flow ${uniq()}`;
  await row(page, name).getByTestId('workspace-rename').click();
  await page.getByTestId('workspace-rename-input').fill(renamed);
  await page.getByTestId('workspace-rename-save').click();
  await expect(row(page, renamed)).toHaveCount(1);
  await expect(row(page, name)).toHaveCount(0);
  expect((await plexus.api('GET', `/api/workspaces/${id}`)).workspace.name).toBe(renamed);
  // The document's title follows the rename.
  expect((await plexus.snapshot(id)).title).toBe(renamed);

  // Duplicate: a new row "<name> (copy)", another id, same content.
  await row(page, renamed).getByTestId('workspace-duplicate').click();
  const copyRow = row(page, `${renamed} (copy)`);
  await expect(copyRow).toHaveCount(1);
  const copyId = (await copyRow.getAttribute('data-workspace-id'))!;
  expect(copyId).not.toBe(id);
  const copy = await plexus.snapshot(copyId);
  expect(copy.title).toBe(`${renamed} (copy)`);
  expect(copy.cells.map((c) => c.text)).toEqual(['Notes worth copying']);

  // Delete the original: asks first, then the row is gone and the API says 404.
  await row(page, renamed).getByTestId('workspace-delete').click();
  await expect(row(page, renamed).getByRole('alert')).toContainText('Delete');
  await row(page, renamed).getByTestId('workspace-delete-confirm').click();
  await expect(row(page, renamed)).toHaveCount(0);
  await plexus.api('GET', `/api/workspaces/${id}`, undefined, { expect: 404 });
  // The copy is untouched.
  await expect(copyRow).toHaveCount(1);
  await plexus.api('GET', `/api/workspaces/${copyId}`);

  // The list is the server's: after a reload it is the same.
  await page.reload();
  await expect(row(page, `${renamed} (copy)`)).toHaveCount(1);
  await expect(row(page, renamed)).toHaveCount(0);
});
