/** An anchored popover that closes on Escape or a click outside. */
import { useEffect, useRef, type ReactNode } from 'react';

interface Props {
  open: boolean;
  onClose(): void;
  children: ReactNode;
  label: string;
  className?: string;
  testId?: string;
}

export function Popover({ open, onClose, children, label, className, testId }: Props) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!open) return;
    const onKey = (e: KeyboardEvent) => e.key === 'Escape' && onClose();
    const onDown = (e: PointerEvent) => {
      const anchor = ref.current?.parentElement;
      if (anchor && !anchor.contains(e.target as Node)) onClose();
    };
    document.addEventListener('keydown', onKey);
    document.addEventListener('pointerdown', onDown);
    return () => {
      document.removeEventListener('keydown', onKey);
      document.removeEventListener('pointerdown', onDown);
    };
  }, [open, onClose]);
  if (!open) return null;
  return (
    <div ref={ref} className={`popover ${className ?? ''}`} role="dialog" aria-label={label} data-testid={testId}>
      {children}
    </div>
  );
}
