/**
 * Minimal Yjs → React subscriptions. Each hook returns a version number that changes when the
 * observed type changes; derive what you render from the type with useMemo on that version.
 * That keeps getSnapshot trivially cheap and stable, as useSyncExternalStore requires.
 */
import { useCallback, useRef, useSyncExternalStore } from 'react';
import * as Y from 'yjs';

type Observable = Y.AbstractType<any>;

/**
 * Version of `type`, bumped by `observe` (or `observeDeep` when `deep`). `filter` can reject
 * events that do not matter to the caller (it runs on every change, keep it cheap).
 */
export function useYVersion(
  type: Observable | undefined | null,
  deep = false,
  filter?: (events: Array<Y.YEvent<any>>) => boolean,
): number {
  const version = useRef(0);
  const filterRef = useRef(filter);
  filterRef.current = filter;
  const subscribe = useCallback(
    (cb: () => void) => {
      if (!type) return () => {};
      const bump = () => {
        version.current++;
        cb();
      };
      if (deep) {
        const h = (events: Array<Y.YEvent<any>>) => {
          if (!filterRef.current || filterRef.current(events)) bump();
        };
        type.observeDeep(h);
        return () => type.unobserveDeep(h);
      }
      const h = (event: Y.YEvent<any>) => {
        if (!filterRef.current || filterRef.current([event])) bump();
      };
      type.observe(h);
      return () => type.unobserve(h);
    },
    [type, deep],
  );
  return useSyncExternalStore(subscribe, () => version.current);
}
