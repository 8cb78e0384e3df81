/** A coloured message strip (errors, warnings, info), optionally dismissible. */
import type { ReactNode } from 'react';

interface Props {
  tone?: 'error' | 'warning' | 'info';
  children: ReactNode;
  onDismiss?(): void;
  testId?: string;
}

export function Notice({ tone = 'error', children, onDismiss, testId }: Props) {
  return (
    <div className={`notice notice-${tone}`} role={tone === 'error' ? 'alert' : 'status'} data-testid={testId}>
      <div className="notice-body">{children}</div>
      {onDismiss && (
        <button className="icon-btn" aria-label="Dismiss" onClick={onDismiss}>
          ✕
        </button>
      )}
    </div>
  );
}
