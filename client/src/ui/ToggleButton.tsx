/** A small on/off button (the header's panel toggles): `aria-pressed` and the `is-on` look follow `on`. */
import type { ReactNode } from 'react';

export function ToggleButton({ on, onToggle, title, testId, children }: { on: boolean; onToggle(): void; title: string; testId?: string; children: ReactNode }) {
  return (
    <button className={`btn btn-small toggle${on ? ' is-on' : ''}`} aria-pressed={on} data-testid={testId} title={title} onClick={onToggle}>
      {children}
    </button>
  );
}
