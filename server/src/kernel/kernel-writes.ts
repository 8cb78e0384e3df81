/**
 * How the kernel writes into its replica: every write is one transaction with the kernel's origin;
 * results of fast cells are deferred a few milliseconds and written together (a chain of trivial
 * cells becomes a few updates instead of one per cell — each update is validated, logged and
 * relayed by the server, which is most of a trivial cell's cost); the status is published at most
 * every STATUS_FLUSH_MS unless asked for now. Writes always reach the document in the order the
 * kernel made them: a write now first flushes what was deferred.
 * Effects: document writes, timers (through the kernel's clock).
 */
import type * as Y from 'yjs';
import { KERNEL_ORIGIN, writeKernelStatus, type KernelStatus } from '@plexus/shared';
import type { KernelClock, KernelTimer } from './kernel-clock.ts';

/** Results of fast cells are written together, at most this long after the first of them. */
const WRITE_BATCH_MS = 8;
/** Status changes within this long become one write. */
const STATUS_FLUSH_MS = 40;

export class KernelWrites {
  private deferred: Array<() => void> = [];
  private deferTimer: KernelTimer | null = null;
  private statusTimer: KernelTimer | null = null;
  private closed = false;
  private sealed = false;

  constructor(
    private readonly doc: Y.Doc,
    private readonly clock: KernelClock,
    /** The status to publish, as of now. */
    private readonly status: () => KernelStatus,
  ) {}

  /** Writes now, after any deferred writes. One transaction, kernel origin (nothing once sealed). */
  now(fn: () => void): void {
    if (this.sealed) return;
    this.flush();
    this.doc.transact(fn, KERNEL_ORIGIN);
  }

  /** Writes within WRITE_BATCH_MS, together with the other writes deferred meanwhile. */
  soon(fn: () => void): void {
    this.deferred.push(fn);
    this.deferTimer ??= this.clock.setTimeout(() => this.flush(), WRITE_BATCH_MS);
  }

  /** Writes what was deferred, now (nothing once closed). */
  flush(): void {
    this.clock.clearTimeout(this.deferTimer);
    this.deferTimer = null;
    if (!this.deferred.length || this.closed) return;
    const fns = this.deferred;
    this.deferred = [];
    this.doc.transact(() => fns.forEach((f) => f()), KERNEL_ORIGIN);
  }

  /** Publishes the status now, or within STATUS_FLUSH_MS (many changes → one write). */
  publishStatus(now = false): void {
    if (this.closed) return;
    if (now) {
      this.clock.clearTimeout(this.statusTimer);
      this.statusTimer = null;
      writeKernelStatus(this.doc, this.status(), KERNEL_ORIGIN);
      return;
    }
    this.statusTimer ??= this.clock.setTimeout(() => {
      this.statusTimer = null;
      if (!this.closed) writeKernelStatus(this.doc, this.status(), KERNEL_ORIGIN);
    }, STATUS_FLUSH_MS);
  }

  /** The kernel stops: no more deferred or timed writes (writes now still go through). */
  close(): void {
    this.closed = true;
    this.clock.clearTimeout(this.statusTimer);
    this.statusTimer = null;
  }

  /**
   * The kernel has let go of the document: nothing more is written, not even now (a run that ends
   * while its runtime is being stopped must not reach a document the kernel no longer serves —
   * inside the server that is the live document itself).
   */
  seal(): void {
    this.close();
    this.sealed = true;
  }
}
