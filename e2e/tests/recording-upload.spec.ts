/**
 * A multi-page TIFF dropped on the notebook is a recording, not a table: it uploads, imports as a
 * job that Bob follows in Analyses, and its dataset joins the viewer's volumes for everyone.
 */
import { writeTiff } from '../../calcium/test/tiff-writer.ts';
import { ALICE, BOB, expect, openWorkspace, test, uniq } from '../support/plexus.ts';

test('a TIFF recording dropped by Alice is imported as a job Bob sees finish; its movie is offered in the viewer', async ({ plexus, actor }) => {
  const { workspace } = await plexus.createWorkspace(`recording ${uniq()}`);
  const alice = await actor(ALICE);
  const bob = await actor(BOB);
  await openWorkspace(alice.page, plexus, workspace.id);
  await openWorkspace(bob.page, plexus, workspace.id);
  const W = 32;
  const H = 24;
  const pages = Array.from({ length: 40 }, (_, f) => Uint16Array.from({ length: W * H }, (_, i) => (i * 7 + f * 13) % 1000));
  const tiff = writeTiff({ width: W, height: H, pages, sampleType: 'uint16', description: 'ImageJ=1.54f\nimages=40\nframes=40\nfinterval=0.05\n' });
  const name = `mouse${uniq().replace(/[^a-z0-9]/gi, '')}.tif`;
  if ((await alice.page.getByTestId('data-panel').count()) === 0) await alice.page.getByTestId('data-toggle').click();
  await alice.page.getByTestId('data-file-input').setInputFiles({ name, mimeType: 'image/tiff', buffer: Buffer.from(tiff) });
  const up = alice.page.getByTestId('upload');
  await expect(up).toHaveAttribute('data-status', 'done', { timeout: 30_000 });
  await expect(up).toContainText('→ recording');
  const dataset = (await up.textContent())!.match(/recording (\S+)/)![1]!;
  // Bob follows the import in Analyses.
  await bob.page.getByTestId('analyses-toggle').click();
  const job = bob.page.getByTestId('analyses-panel').getByTestId('job');
  await expect(job.getByTestId('job-title')).toHaveText(`Import of ${name}`);
  await expect(job).toHaveAttribute('data-status', 'done', { timeout: 60_000 });
  await expect(job.getByTestId('job-import-result')).toContainText(`Imported as ${dataset}`);
  await expect(job.getByTestId('job-import-result')).toContainText('40 frames at 20 Hz');
  // Its movie is among the volumes Bob can add (and analyse).
  await bob.page.getByTestId('viewer-add-layer').click();
  await expect(bob.page.locator(`[data-testid="viewer-add-volume"][data-layer="${dataset}/movie"]`)).toBeVisible({ timeout: 60_000 });
});
