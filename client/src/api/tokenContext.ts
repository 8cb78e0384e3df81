/** The access token of the open workspace, for components that call the HTTP API. Pure module. */
import { createContext, useContext } from 'react';

export const ApiTokenContext = createContext<string | null>(null);

/** The workspace's access token (throws outside a workspace page). */
export function useApiToken(): string {
  const t = useContext(ApiTokenContext);
  if (t === null) throw new Error('useApiToken outside a workspace');
  return t;
}
