/**
 * Volumes are fetched by Neuroglancer with plain requests that cannot carry our bearer token;
 * the server turns the token into an HttpOnly cookie scoped to /volumes (docs/api.md).
 * Effects: one HTTP request per token.
 */
const done = new Set<string>();

export async function ensureVolumeSession(token: string): Promise<void> {
  if (done.has(token)) return;
  const res = await fetch('/api/volume-session', { method: 'POST', headers: { authorization: `Bearer ${token}` } });
  if (!res.ok) throw new Error(`volume session refused (${res.status})`);
  done.add(token);
}

/** Datasets of this server that a state refers to (`…plexus://volumes/<dataset>/…`). */
export function localDatasets(sourceUrls: string[]): string[] {
  const out = new Set<string>();
  for (const u of sourceUrls) {
    const m = /plexus:\/\/volumes\/([^/]+)\//.exec(u);
    if (m) out.add(decodeURIComponent(m[1]!));
  }
  return [...out];
}

/**
 * Waits while the server is still generating a dataset (it answers 503): Neuroglancer would show
 * an error and not retry. Calls `onWait` with the dataset names while waiting; gives up after
 * `maxMs` and lets the viewer show whatever error remains.
 */
export async function waitForVolumes(datasets: string[], onWait: (waiting: string[]) => void, maxMs = 120_000): Promise<void> {
  const end = Date.now() + maxMs;
  let pending = datasets;
  while (pending.length && Date.now() < end) {
    const still: string[] = [];
    for (const d of pending) {
      const res = await fetch(`/volumes/${encodeURIComponent(d)}/`).catch(() => null);
      if (res?.status === 503) still.push(d);
    }
    pending = still;
    if (pending.length) {
      onWait(pending);
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}
