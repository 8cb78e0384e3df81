/** A protocol violation with the close code and reason the offender receives. Pure module. */
import type { CloseCode } from '@plexus/shared';

export class ProtocolError extends Error {
  readonly code: number;
  readonly reason: string;
  constructor(close: CloseCode, detail?: string) {
    super(detail ? `${close.reason}: ${detail}` : close.reason);
    this.code = close.code;
    this.reason = close.reason;
  }
}
