/**
 * Test support: the `test` object with fixtures (`plexus`: the server, its HTTP API and Node-side
 * Yjs clients; `actors`: people, each in their own browser context), and page helpers that read
 * the app's real state (DOM of the editors, and the Y.Doc through `window.__plexus`).
 */
import { test as base, expect, type Browser, type BrowserContext, type Locator, type Page } from '@playwright/test';
import { HocuspocusProvider, HocuspocusProviderWebsocket } from '@hocuspocus/provider';
import WebSocket from 'ws';
import * as Y from 'yjs';
import { createCell, listCells, listMessages, getTitle, userOrigin, type CellKind } from '@plexus/shared';
import { until as kitUntil } from '@plexus/testkit/wait';
import { readState } from './server.ts';

export { expect };

// ---------------------------------------------------------------------------------------------
// People

export interface Person {
  id: string;
  name: string;
  color: string;
}

export const ALICE: Person = { id: 'u_e2e_alice', name: 'Alice', color: '#e6194b' };
export const BOB: Person = { id: 'u_e2e_bob', name: 'Bob', color: '#4363d8' };
export const VICTOR: Person = { id: 'u_e2e_victor', name: 'Victor', color: '#3cb44b' };
export const CAROL: Person = { id: 'u_e2e_carol', name: 'Carol', color: '#f58231' };

/** A short random suffix for names and texts, so tests never see each other's data. */
export const uniq = () => Math.random().toString(36).slice(2, 8);

// ---------------------------------------------------------------------------------------------
// Server side: HTTP API and Node Yjs clients

export interface Workspace {
  id: string;
  name: string;
  epoch: string;
  created: number;
  updated: number;
}

export interface CellSeed {
  kind: CellKind;
  source?: string;
  /** SQL cells: the name their result is bound to. */
  name?: string;
}

/** A cell as the server holds it: code/SQL text, or a markdown cell's paragraph texts. */
export interface CellState {
  id: string;
  kind: CellKind;
  text: string;
}

export interface ServerSnapshot {
  title: string;
  cells: CellState[];
  chat: Array<{ author: string; text: string }>;
}

/** Plain text of a cell source: Y.Text as is; a rich-text fragment as its blocks' texts, one per line. */
export function sourceText(src: unknown): string {
  if (src instanceof Y.Text && !(src instanceof Y.XmlText)) return src.toString();
  const inner = (n: unknown): string => {
    if (n instanceof Y.XmlText) return n.toDelta().map((d: { insert: unknown }) => (typeof d.insert === 'string' ? d.insert : '')).join('');
    if (n instanceof Y.XmlElement) return n.toArray().map(inner).join('');
    return '';
  };
  if (src instanceof Y.XmlFragment) return src.toArray().map(inner).join('\n');
  return '';
}

export class Plexus {
  constructor(
    readonly url: string,
    readonly ownerToken: string,
  ) {}

  /** Calls the HTTP API; throws on an unexpected status. */
  async api<T = any>(method: string, p: string, body?: unknown, opts: { token?: string | null; expect?: number } = {}): Promise<T> {
    const token = opts.token === undefined ? this.ownerToken : opts.token;
    const res = await fetch(this.url + p, {
      method,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    const want = opts.expect ?? (res.ok ? res.status : 200);
    if (res.status !== want) throw new Error(`${method} ${p} answered ${res.status} (expected ${want}): ${text}`);
    return (text ? JSON.parse(text) : null) as T;
  }

  /** Creates a workspace through the API and adds `cells` to it through a Node Yjs client. */
  async createWorkspace(name: string, cells: CellSeed[] = []): Promise<{ workspace: Workspace; cellIds: string[] }> {
    const { workspace } = await this.api<{ workspace: Workspace }>('POST', '/api/workspaces', { name }, { expect: 201 });
    const cellIds = cells.length
      ? await this.withDoc(workspace.id, (doc) => {
          const origin = userOrigin('e2e-seed', 'Seed');
          return cells.map((c) => createCell(doc, { kind: c.kind, source: c.source, author: 'e2e-seed', ...(c.name ? { name: c.name } : {}) }, origin));
        })
      : [];
    return { workspace, cellIds };
  }

  /** A share link (`url` opens the workspace with the link's role). */
  share(workspaceId: string, role: 'editor' | 'viewer'): Promise<{ token: string; url: string; role: string }> {
    return this.api('POST', `/api/workspaces/${workspaceId}/share`, { role });
  }

  /**
   * Connects a stock Hocuspocus client (Node, `ws`), waits for the server's state, runs `fn`, and
   * waits until the server acknowledged every change `fn` made. Then disconnects.
   */
  async withDoc<T>(workspaceId: string, fn: (doc: Y.Doc) => T | Promise<T>, token = this.ownerToken): Promise<T> {
    const doc = new Y.Doc();
    const socket = new HocuspocusProviderWebsocket({ url: this.url.replace(/^http/, 'ws') + '/collab', WebSocketPolyfill: WebSocket, maxAttempts: 3 } as never);
    let failure: string | null = null;
    const provider = new HocuspocusProvider({
      websocketProvider: socket,
      name: workspaceId,
      document: doc,
      token,
      awareness: null,
      onAuthenticationFailed: ({ reason }) => (failure = `authentication failed: ${reason}`),
      onClose: ({ event }) => (failure ??= event.reason ? `closed: ${event.reason}` : null),
    });
    provider.attach();
    try {
      await until(() => {
        if (failure) throw new Error(failure);
        return provider.isSynced;
      }, `the Node client to sync ${workspaceId}`);
      const out = await fn(doc);
      await until(() => {
        if (failure) throw new Error(failure);
        return provider.unsyncedChanges === 0;
      }, `the server to acknowledge the Node client's changes to ${workspaceId}`);
      return out;
    } finally {
      provider.destroy();
      socket.destroy();
      doc.destroy();
    }
  }

  /** What the server holds right now, read by a fresh client (no browser, no IndexedDB). */
  snapshot(workspaceId: string): Promise<ServerSnapshot> {
    return this.withDoc(workspaceId, (doc) => ({
      title: getTitle(doc),
      cells: listCells(doc).map((c) => ({ id: c.id, kind: c.kind, text: sourceText(c.map.get('source')) })),
      chat: listMessages(doc).map((m) => ({ author: m.author.name, text: m.text })),
    }));
  }
}

/** Polls `fn` until it returns true (or throws), failing after `timeout` ms (the test kit's `until`, e2e's argument order). */
export const until = (fn: () => boolean, what: string, timeout = 60_000): Promise<void> => kitUntil(fn, timeout, 20, what);

// ---------------------------------------------------------------------------------------------
// Browser side

// Functions passed to `page.evaluate` run in the browser and use `(globalThis as any)` for the
// page's window: the repository's root tsconfig (which includes e2e/) has no DOM library, and
// the type of the app's `window.__plexus` ({ doc, provider, awareness, role, session }, see
// client/README.md) lives in the client program.

export interface Actor {
  person: Person;
  context: BrowserContext;
  page: Page;
  /** Uncaught exceptions of the page (checked after the test). */
  errors: string[];
}

/** A person with their own browser context (own localStorage and IndexedDB) and one page. */
export async function newActor(browser: Browser, person: Person): Promise<Actor> {
  const context = await browser.newContext();
  // Before any app script: the app reads `plexus.user` at load. Only when absent, so a rename
  // through the UI survives a reload.
  await context.addInitScript((p) => {
    if (!localStorage.getItem('plexus.user')) localStorage.setItem('plexus.user', JSON.stringify(p));
  }, person);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(`${person.name}: ${e.message}`));
  return { person, context, page, errors };
}

/** Opens a workspace (token in the link, as people do) and waits until it is synced and live. */
export async function openWorkspace(page: Page, plexus: Plexus, workspaceId: string, token = plexus.ownerToken): Promise<void> {
  await page.goto(`${plexus.url}/w/${workspaceId}?token=${encodeURIComponent(token)}`);
  await waitLive(page);
}

/** Alice (owner link), Bob (editor share link) and Victor (view-only share link), each with the workspace open in their own browser. */
export async function ownerEditorViewer(plexus: Plexus, actor: Actors, workspaceId: string): Promise<{ alice: Actor; bob: Actor; victor: Actor }> {
  const editLink = await plexus.share(workspaceId, 'editor');
  const viewLink = await plexus.share(workspaceId, 'viewer');
  const [alice, bob, victor] = [await actor(ALICE), await actor(BOB), await actor(VICTOR)];
  await openWorkspace(alice.page, plexus, workspaceId);
  await openWorkspace(bob.page, plexus, workspaceId, editLink.token);
  await openWorkspace(victor.page, plexus, workspaceId, viewLink.token);
  return { alice, bob, victor };
}

/** Waits for the synced document and a live connection. */
export async function waitLive(page: Page): Promise<void> {
  await expect(page.getByTestId('doc-ready')).toBeVisible();
  await expect(page.getByTestId('connection-status')).toHaveText('connected');
  await expect.poll(() => page.evaluate(() => (globalThis as any).__plexus?.provider?.isSynced === true)).toBe(true);
}

export const cellLocator = (page: Page, cellId: string): Locator => page.locator(`[data-testid="cell"][data-cell-id="${cellId}"]`);
export const codeContent = (page: Page, cellId: string): Locator => cellLocator(page, cellId).locator('.cm-content');
export const markdownContent = (page: Page, cellId: string): Locator => cellLocator(page, cellId).locator('.ProseMirror');

/**
 * What a page shows in a cell's editor (remote caret widgets and their name labels removed) and
 * what its Y.Doc holds for that cell, read in the page. Code cells: the text with lines joined
 * by \n. Markdown cells: the blocks' texts joined by \n (as `sourceText`).
 */
export async function cellTexts(page: Page, cellId: string): Promise<{ dom: string | null; y: string | null }> {
  return page.evaluate((id) => {
    const g = globalThis as any;
    const root = g.document.querySelector(`[data-testid="cell"][data-cell-id="${id}"]`);
    const strip = (el: any): string => {
      const c = el.cloneNode(true);
      c.querySelectorAll('.cm-ySelectionCaret, .cm-ySelectionInfo, .cm-widgetBuffer, .remote-caret, .ProseMirror-widget').forEach((w: any) => w.remove());
      return c.textContent ?? '';
    };
    let dom: string | null = null;
    const cm = root?.querySelector('.cm-content');
    const pm = root?.querySelector('.ProseMirror');
    if (cm) dom = [...cm.querySelectorAll(':scope > .cm-line')].map(strip).join('\n');
    else if (pm) dom = [...pm.children].map(strip).join('\n');

    const doc = g.__plexus?.doc ?? null;
    let y: string | null = null;
    const src = doc?.getMap('cells').get(id)?.get('source');
    if (src) {
      // Class names are minified in the bundle: tell the Yjs types apart by their methods.
      const isText = (n: any) => typeof n.toDelta === 'function';
      const inner = (n: any): string =>
        isText(n) ? n.toDelta().map((d: any) => (typeof d.insert === 'string' ? d.insert : '')).join('') : n.toArray().map(inner).join('');
      y = isText(src) ? src.toString() : src.toArray().map(inner).join('\n');
    }
    return { dom, y };
  }, cellId);
}

/** Cell ids in notebook order as the page renders them. */
export const renderedCellIds = (page: Page): Promise<string[]> =>
  page.locator('[data-testid="cell"]').evaluateAll((els) => els.map((e: any) => String(e.dataset.cellId ?? '')));

/** Every cell the page renders, in order: id, kind, editor text and Y.Doc text. */
export async function notebookState(page: Page): Promise<Array<{ id: string; kind: string | null; dom: string | null; y: string | null }>> {
  const ids = await renderedCellIds(page);
  return Promise.all(ids.map(async (id) => ({ id, kind: await cellLocator(page, id).getAttribute('data-kind'), ...(await cellTexts(page, id)) })));
}

/** Cell ids in the page's Y.Doc (any order). */
export const docCellIds = (page: Page): Promise<string[]> =>
  page.evaluate(() => [...((globalThis as any).__plexus.doc.getMap('cells').keys() as Iterable<string>)].sort());

/** Puts the caret at the very end of a code cell's text (click into it, then Ctrl+End). */
export async function caretToEnd(page: Page, editor: Locator): Promise<void> {
  await editor.click();
  await page.keyboard.press('Control+End');
}

/** Whether the keyboard focus is inside an editor (CodeMirror or ProseMirror) or a text field. */
export const focusInEditor = (page: Page): Promise<boolean> =>
  page.evaluate(() => !!(globalThis as any).document.activeElement?.closest('.cm-editor, .ProseMirror, input, textarea, select'));

// ---------------------------------------------------------------------------------------------
// Fixtures

export interface Actors {
  /** Creates a person with their own browser context. Closed after the test. */
  (person: Person): Promise<Actor>;
}

export const test = base.extend<{ plexus: Plexus; actor: Actors }>({
  plexus: async ({}, use) => {
    // Read per test: a test may have restarted the server (new pid, same url).
    const state = readState();
    await use(new Plexus(state.url, state.ownerToken));
  },
  actor: async ({ browser }, use, testInfo) => {
    const made: Actor[] = [];
    await use(async (person) => {
      const a = await newActor(browser, person);
      made.push(a);
      return a;
    });
    const errors = made.flatMap((a) => a.errors);
    // Every change a page made must keep to the document schema (the browser checks its own writes).
    for (const a of made)
      for (const p of a.context.pages()) {
        const problems = await p.evaluate(() => (window as unknown as { __plexus?: { session?: { schemaProblems?: unknown[] } } }).__plexus?.session?.schemaProblems ?? []).catch(() => []);
        if (problems.length) errors.push(`schema violations in ${p.url()}: ${JSON.stringify(problems).slice(0, 2000)}`);
      }
    for (const a of made) await a.context.close().catch(() => {});
    if (errors.length) {
      await testInfo.attach('page-errors', { body: errors.join('\n'), contentType: 'text/plain' });
      // An uncaught exception in the app is a bug even when the assertions passed.
      expect(errors, 'uncaught exceptions in the app').toEqual([]);
    }
  },
});
