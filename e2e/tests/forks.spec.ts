/**
 * Hand-outs in the browser: a teacher makes a hand-out link in the Share menu; a student opens it,
 * names themselves and lands in their own copy ("your copy of …"), runs a cell that fails and
 * raises a hand; the teacher's class roster shows the student, the error (cell and message) and
 * the hand, pushed by the server while the teacher only watches. Reopening the link brings the
 * student back to the same copy; the teacher's Open link opens the student's copy.
 */
import { ALICE, BOB, cellLocator, expect, openWorkspace, test, uniq, waitLive } from '../support/plexus.ts';
import { output, setCellCode } from '../support/notebook.ts';

test('a teacher hands out a workspace; a student\'s failing cell and raised hand reach the roster', async ({ plexus, actor }) => {
  const name = `Exercise ${uniq()}`;
  const { workspace, cellIds } = await plexus.createWorkspace(name, [
    { kind: 'markdown', source: 'Compute the mean of the trials.' },
    { kind: 'code', source: 'const trials = [1, 2, 3];' },
  ]);
  const teacher = await actor(ALICE);
  const t = teacher.page;
  await openWorkspace(t, plexus, workspace.id);

  // The teacher makes a hand-out link.
  await t.getByTestId('share').click();
  await t.getByTestId('share-handout').click();
  const url = await t.getByTestId('share-url').inputValue();
  const claims = JSON.parse(Buffer.from(new URL(url).searchParams.get('token')!.split('.')[0]!, 'base64url').toString());
  expect(claims).toMatchObject({ ws: workspace.id, handout: true });
  await t.keyboard.press('Escape');

  // The student opens it, gives their name and gets their own copy.
  const student = await actor(BOB);
  const s = student.page;
  await s.goto(url);
  await expect(s.getByTestId('handout-page')).toBeVisible();
  await s.getByTestId('handout-name').fill('Bea Student');
  await s.getByTestId('handout-open').click();
  await waitLive(s);
  const fork = await s.evaluate(() => (globalThis as any).__plexus.session.workspace.id as string);
  expect(fork).not.toBe(workspace.id);
  expect(new URL(s.url()).pathname).toBe(`/w/${fork}`);
  await expect(s.getByTestId('forked-from')).toContainText(`your copy of ${name}`);
  expect(await s.evaluate(() => (globalThis as any).__plexus.role)).toBe('owner');
  await expect(cellLocator(s, cellIds[1]!)).toBeVisible();

  // The teacher's roster (opened by making the hand-out link) lists the student — pushed: the
  // teacher does nothing.
  await expect(t.getByTestId('roster-toggle')).toHaveAttribute('aria-pressed', 'true');
  await expect(t.getByTestId('roster-panel')).toBeVisible();
  const row = t.locator(`[data-testid="roster-row"][data-fork="${fork}"]`);
  await expect(row).toContainText('Bea Student');
  await expect(row).toHaveAttribute('data-state', 'not-run');

  // The student writes a failing cell and runs it.
  await setCellCode(s, cellIds[1]!, 'const trials = [1, 2, 3];\nconst mean = trials.reduce((a, b) => a + b) / trial.length;');
  await cellLocator(s, cellIds[1]!).getByTestId('cell-run').click();
  await expect(output(s, cellIds[1]!, 'output-error')).toContainText('trial is not defined');
  await expect(row).toHaveAttribute('data-state', 'error');
  await expect(row.getByTestId('roster-error')).toContainText('Cell 2:');
  await expect(row.getByTestId('roster-error')).toContainText('trial is not defined');

  // A raised hand reaches the roster too.
  await s.getByTestId('raise-hand').click();
  await expect(s.getByTestId('raise-hand')).toHaveAttribute('aria-pressed', 'true');
  await expect(row.getByTestId('roster-hand')).toContainText('raised');
  await expect(t.getByTestId('roster-toggle')).toContainText('✋1');

  // Opening the link again: the same copy.
  await s.goto(url);
  await waitLive(s);
  expect(await s.evaluate(() => (globalThis as any).__plexus.session.workspace.id as string)).toBe(fork);

  // The teacher opens the student's copy from the roster.
  const [opened] = await Promise.all([teacher.context.waitForEvent('page'), row.getByTestId('roster-open').click()]);
  await waitLive(opened);
  expect(await opened.evaluate(() => (globalThis as any).__plexus.session.workspace.id as string)).toBe(fork);
  await expect(output(opened, cellIds[1]!, 'output-error')).toContainText('trial is not defined');
});
