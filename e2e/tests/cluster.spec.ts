/**
 * Several nodes as people use them: two browsers on two different Plexus nodes (child processes on
 * real Redis and Postgres, sharing a data directory) co-edit one code cell and see each other's
 * presence — one node relays the other's page to the node serving the workspace. Then both come
 * through HAProxy, the serving node is killed with -9 while they type, and both carry on: their
 * pages reconnect, the workspace moves, and every character typed is there once, in both browsers
 * and on the server.
 */
import { startHaproxy, startTestCluster, type ChildServer, type Haproxy, type TestCluster } from '@plexus/testkit';
import { ALICE, BOB, Plexus, cellTexts, codeContent, caretToEnd, expect, openWorkspace, test } from '../support/plexus.ts';

let cluster: TestCluster;
let n1: ChildServer;
let n2: ChildServer;
let lb: Haproxy;
test.beforeAll(async () => {
  cluster = await startTestCluster({ leaseMs: 2000 });
  [n1, n2] = await Promise.all([cluster.startChildNode('e2e-node-1'), cluster.startChildNode('e2e-node-2')]);
  lb = await startHaproxy([{ name: 'e2e-node-1', url: n1.url }, { name: 'e2e-node-2', url: n2.url }]);
});
test.afterAll(async () => {
  await lb?.destroy();
  await cluster?.destroy();
});

test('two browsers on two nodes co-edit and see each other; the serving node is killed mid-typing and nothing is lost', async ({ actor }) => {
  const one = new Plexus(n1.url, n1.ownerToken);
  const two = new Plexus(n2.url, n1.ownerToken);
  const { workspace, cellIds } = await one.createWorkspace('Across nodes', [{ kind: 'code', source: 'base' }]);
  const cell = cellIds[0]!;
  const bobLink = await two.share(workspace.id, 'editor');
  const alice = await actor(ALICE);
  const bob = await actor(BOB);
  await openWorkspace(alice.page, one, workspace.id);
  await openWorkspace(bob.page, two, workspace.id, bobLink.token);
  // Presence crosses nodes: each sees the other's avatar.
  await expect(alice.page.locator('[data-testid="avatar"][title="Bob (editor link)"]')).toHaveCount(1);
  await expect(bob.page.locator('[data-testid="avatar"][title="Alice"]')).toHaveCount(1);
  const both = async () => {
    const [a, b] = await Promise.all([cellTexts(alice.page, cell), cellTexts(bob.page, cell)]);
    return new Set([a.dom, a.y, b.dom, b.y]).size === 1 ? a.y : `disagree: ${JSON.stringify([a, b])}`;
  };
  // Each types once the other's text has arrived (so the expected order is known).
  await caretToEnd(alice.page, codeContent(alice.page, cell));
  await alice.page.keyboard.type(' alice');
  await expect.poll(both).toBe('base alice');
  await caretToEnd(bob.page, codeContent(bob.page, cell));
  await bob.page.keyboard.type(' bob');
  await expect.poll(both).toBe('base alice bob');

  // Both through the load balancer now; the node serving the workspace dies while they type.
  const viaLb = new Plexus(lb.url, n1.ownerToken);
  await openWorkspace(alice.page, viaLb, workspace.id);
  await openWorkspace(bob.page, viaLb, workspace.id, bobLink.token);
  const serving = (await fetch(`${n1.url}/metrics`).then((r) => r.text())).match(/^plexus_leases_held\{[^}]*\} (\d+)/m)?.[1] === '1' ? n1 : n2;
  const survivor = serving === n1 ? n2 : n1;
  await caretToEnd(alice.page, codeContent(alice.page, cell));
  const typing = alice.page.keyboard.type(' 0123456789', { delay: 60 });
  await serving.kill('SIGKILL');
  await typing;
  // Alice's typing reaches Bob once both pages reconnected and the survivor took the workspace.
  await expect.poll(both, { timeout: 90_000 }).toBe('base alice bob 0123456789');
  await caretToEnd(bob.page, codeContent(bob.page, cell));
  await bob.page.keyboard.type(' after');
  await expect.poll(both, { timeout: 90_000 }).toBe('base alice bob 0123456789 after');
  const text = await both();
  // The surviving node serves it now, with every character.
  const snapshot = await new Plexus(survivor.url, n1.ownerToken).snapshot(workspace.id);
  expect(snapshot.cells.map((c) => c.text)).toEqual([text]);
});
