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
