/** A full-page message (missing token, not found, fatal errors, loading). */
import type { ReactNode } from 'react';

export function CenteredPage({ title, children, testId }: { title: string; children?: ReactNode; testId?: string }) {
  return (
    <div className="centered-page" data-testid={testId}>
      <div className="centered-card">
        <div className="brand">
          <span className="brand-dot" /> Plexus
        </div>
        <h1>{title}</h1>
        {children}
      </div>
    </div>
  );
}
