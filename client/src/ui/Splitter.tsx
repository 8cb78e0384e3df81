/**
 * A vertical drag handle between two panels. Reports the new size of the panel on `side` of it
 * (the handle sits on that panel's left edge when side is 'right'). Keyboard: ←/→ by 16px.
 */
import { useRef, type KeyboardEvent, type PointerEvent } from 'react';

interface Props {
  /** Current size of the panel being resized. */
  size: number;
  onResize(size: number): void;
  /** The resized panel is to the right of the handle (grows when dragging left). */
  side: 'left' | 'right';
  label: string;
  testId?: string;
}

export function Splitter({ size, onResize, side, label, testId }: Props) {
  const start = useRef<{ x: number; size: number } | null>(null);
  const sign = side === 'right' ? -1 : 1;

  const onPointerDown = (e: PointerEvent<HTMLDivElement>) => {
    e.preventDefault();
    e.currentTarget.setPointerCapture(e.pointerId);
    start.current = { x: e.clientX, size };
    document.body.classList.add('is-resizing');
  };
  const onPointerMove = (e: PointerEvent<HTMLDivElement>) => {
    if (start.current) onResize(start.current.size + sign * (e.clientX - start.current.x));
  };
  const onPointerUp = () => {
    start.current = null;
    document.body.classList.remove('is-resizing');
  };
  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key === 'ArrowLeft' || e.key === 'ArrowRight') {
      e.preventDefault();
      onResize(size + sign * (e.key === 'ArrowRight' ? 16 : -16));
    }
  };

  return (
    <div
      className="splitter"
      role="separator"
      aria-orientation="vertical"
      aria-label={label}
      aria-valuenow={size}
      tabIndex={0}
      data-testid={testId}
      onPointerDown={onPointerDown}
      onPointerMove={onPointerMove}
      onPointerUp={onPointerUp}
      onPointerCancel={onPointerUp}
      onKeyDown={onKeyDown}
    />
  );
}
