/**
 * What this Plexus server can do (`GET /api/config`): fetched once per token and shared by the
 * components that ask. Until it arrives (or when it cannot be had) they see null and offer only
 * what every server does. Effects: network.
 */
import { useEffect, useState } from 'react';
import type { AtlasServerConfig } from '@plexus/shared';
import { apiRequest } from './http.ts';

export interface ServerConfigView {
  atlas: AtlasServerConfig;
}

const asked = new Map<string, Promise<ServerConfigView>>();

export function fetchServerConfig(token: string): Promise<ServerConfigView> {
  let p = asked.get(token);
  if (!p) {
    p = apiRequest<ServerConfigView>('/api/config', { token });
    asked.set(token, p);
    // A failed request is asked again next time.
    p.catch(() => asked.delete(token));
  }
  return p;
}

/** The server's configuration, or null until it has arrived. */
export function useServerConfig(token: string): ServerConfigView | null {
  const [config, setConfig] = useState<ServerConfigView | null>(null);
  useEffect(() => {
    let live = true;
    fetchServerConfig(token).then(
      (c) => live && setConfig(c),
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [token]);
  return config;
}
