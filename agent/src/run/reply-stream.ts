/**
 * Streams the model's text into the answer's Y.Text in batches: the first piece after a pause is
 * written at once, then at most one write per `intervalMs`, so collaborators watch the answer grow
 * without one Yjs update per token. `flush()` writes what is pending (before tool calls and at the end);
 * `truncate()` takes back what was streamed since a mark (an answer the run revises).
 */
import type * as Y from 'yjs';
import { appendToMessage, truncateMessage, type Origin } from '@plexus/shared';

export class ReplyStream {
  private pending = '';
  private timer: NodeJS.Timeout | null = null;
  private lastWrite = 0;
  written = 0;

  constructor(
    private readonly doc: Y.Doc,
    private readonly messageId: string,
    private readonly origin: Origin,
    private readonly intervalMs = 16,
  ) {}

  push(text: string): void {
    if (!text) return;
    this.pending += text;
    if (this.timer) return;
    const wait = this.lastWrite + this.intervalMs - Date.now();
    if (wait <= 0) this.flush();
    else this.timer = setTimeout(() => this.flush(), wait);
  }

  /** Characters streamed so far (written or pending). */
  get length(): number {
    return this.written + this.pending.length;
  }

  /** Removes everything streamed after `from` (a `length` taken earlier). */
  truncate(from: number): void {
    this.flush();
    if (from >= this.written) return;
    truncateMessage(this.doc, this.messageId, from, this.origin);
    this.written = from;
  }

  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (!this.pending) return;
    const t = this.pending;
    this.pending = '';
    this.lastWrite = Date.now();
    this.written += t.length;
    appendToMessage(this.doc, this.messageId, t, this.origin);
  }
}
