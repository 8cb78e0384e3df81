import WebSocket from 'ws';

/**
 * `ws` with a no-op 'error' listener. Destroying a Hocuspocus provider whose socket is still
 * connecting closes it after the provider removed its own listeners, and `ws` then emits an
 * 'error' nobody listens to, which would crash the process (it took the whole server down once:
 * docs/performance.md §10). Use it as `WebSocketPolyfill`.
 */
export class QuietWebSocket extends WebSocket {
  constructor(...args: ConstructorParameters<typeof WebSocket>) {
    super(...args);
    this.on('error', () => {});
  }
}
