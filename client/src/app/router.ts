/**
 * Two routes do not need a router library: `/` (home) and `/w/:id` (a workspace). Navigation
 * uses the History API; a custom event tells subscribers that the location changed.
 */
import { useSyncExternalStore } from 'react';

export type Route = { name: 'home' } | { name: 'workspace'; id: string } | { name: 'not-found'; path: string };

const NAV_EVENT = 'plexus:navigate';

export function parseRoute(pathname: string): Route {
  if (pathname === '/' || pathname === '') return { name: 'home' };
  const m = /^\/w\/([^/]+)\/?$/.exec(pathname);
  if (m) return { name: 'workspace', id: decodeURIComponent(m[1]!) };
  return { name: 'not-found', path: pathname };
}

/** Goes to `path`; `replace` takes the place of the current entry (a page that only led here). */
export function navigate(path: string, opts: { replace?: boolean } = {}): void {
  if (path === window.location.pathname) return;
  if (opts.replace) window.history.replaceState(null, '', path);
  else window.history.pushState(null, '', path);
  window.dispatchEvent(new Event(NAV_EVENT));
}

function subscribe(cb: () => void): () => void {
  window.addEventListener('popstate', cb);
  window.addEventListener(NAV_EVENT, cb);
  return () => {
    window.removeEventListener('popstate', cb);
    window.removeEventListener(NAV_EVENT, cb);
  };
}

/** The current pathname (re-renders on navigation). */
export function usePathname(): string {
  return useSyncExternalStore(subscribe, () => window.location.pathname);
}

export const workspacePath = (id: string) => `/w/${encodeURIComponent(id)}`;
