/**
 * The server side of every WebSocket (both endpoints). `ws` refuses a message longer than its
 * `maxPayload` while reading the frame header (before buffering it: the cap protects memory), then
 * closes with 1009; our documented code is 4413 `message-too-large` (`CloseCodes.TooLarge`), so
 * that close is translated here. `ws` calls `close(1009)` on the socket object itself (its
 * receiver's error handler), which is why this is a subclass given to `WebSocketServer` (its
 * public `WebSocket` option) rather than a listener: by the time the `error` event fires the
 * close frame is already sent. Each socket also remembers its endpoint.
 * Effects: network I/O.
 */
import { WebSocket } from 'ws';
import { CloseCodes } from '@plexus/shared';

/** The status code `ws` closes with when a message exceeds `maxPayload`. */
const WS_MESSAGE_TOO_BIG = 1009;

export class PlexusSocket extends WebSocket {
  /** The endpoint it was upgraded on (http/upgrade.ts), for the metrics. */
  endpoint?: 'collab' | 'yjs';

  override close(code?: number, data?: string | Buffer): void {
    if (code === WS_MESSAGE_TOO_BIG) super.close(CloseCodes.TooLarge.code, CloseCodes.TooLarge.reason);
    else super.close(code, data);
  }
}
