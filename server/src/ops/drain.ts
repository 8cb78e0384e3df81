/**
 * Graceful drain (SIGTERM): the node stops taking new clients — `/api/ready` answers 503
 * `draining`, new WebSockets are accepted and closed at once with 1012 `server-draining` — and
 * waits for the HTTP requests already in flight (bounded by `PLEXUS_DRAIN_MS`); then the server
 * stops (app.ts `close`): every document is flushed and the open WebSockets are closed with the
 * same code, which stock providers and the browser client answer by reconnecting (to another
 * node behind a load balancer, or to this one once restarted). Acknowledged updates are already
 * durable (write-ahead), so nothing a client saw acknowledged is lost, and what it had not yet
 * had acknowledged it still holds and sends again on reconnect.
 * Effects: network (closing sockets), timers.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { WebSocket } from 'ws';

export type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

export class Drain {
  private isDraining = false;
  private readonly inFlight = new Set<ServerResponse>();
  /** Requests a drain waits for (those in flight when it started), and its wake-up. */
  private awaited: Set<ServerResponse> | null = null;
  private wake: (() => void) | null = null;

  get draining(): boolean {
    return this.isDraining;
  }

  /** HTTP requests being answered. */
  get requestsInFlight(): number {
    return this.inFlight.size;
  }

  /** Wraps the server's request listener to know which requests are in flight. */
  track(listener: RequestListener): RequestListener {
    return (req, res) => {
      this.inFlight.add(res);
      res.once('close', () => {
        this.inFlight.delete(res);
        if (this.awaited?.delete(res) && this.awaited.size === 0) this.wake?.();
      });
      listener(req, res);
    };
  }

  /**
   * Starts draining and resolves once the requests in flight now have finished (requests that
   * arrive meanwhile are served, not waited for: probes, scrapes) or after `limitMs`. Resolves
   * with the number still unfinished.
   */
  async start(limitMs: number): Promise<number> {
    this.isDraining = true;
    const awaited = (this.awaited = new Set(this.inFlight));
    if (awaited.size > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, limitMs);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    this.wake = null;
    return awaited.size;
  }
}

/**
 * Closes every socket with `close` and resolves when all have closed (the peer answered the close
 * frame) or after `limitMs`, when the rest are cut. The close frames leave at once: call it
 * before anything that may stop the process.
 */
export function closeSockets(sockets: Iterable<WebSocket>, close: { code: number; reason: string }, limitMs: number): Promise<void> {
  const open = [...sockets];
  const closed = Promise.all(
    open.map((ws) => new Promise<void>((resolve) => {
      if (ws.readyState === ws.CLOSED) return resolve();
      ws.once('close', () => resolve());
      ws.close(close.code, close.reason);
    })),
  );
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, limitMs)));
  return Promise.race([closed, late]).then(() => {
    clearTimeout(timer);
    for (const ws of open) if (ws.readyState !== ws.CLOSED) ws.terminate();
  });
}
