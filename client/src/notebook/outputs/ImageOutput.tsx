/**
 * An image output: base64 bytes or SVG text shown through an `<img>` (an SVG in an img runs no
 * script), fetched by id when it was too large for the document.
 * Effects: network (large images).
 */
import { useEffect, useState } from 'react';
import type { CellOutput } from '@plexus/shared';
import { fetchResult } from '../../api/notebook.ts';
import { useApiToken } from '../../api/tokenContext.ts';
import { useSession } from '../../collab/context.tsx';

type ImageOut = Extract<CellOutput, { type: 'image' }>;

/** A data: URL for image bytes or SVG text. Pure. */
export function imageUrl(mime: string, data: string): string {
  return mime === 'image/svg+xml' && !/^[A-Za-z0-9+/=\s]+$/.test(data)
    ? `data:image/svg+xml;charset=utf-8,${encodeURIComponent(data)}`
    : `data:${mime};base64,${data}`;
}

export function ImageOutput({ out }: { out: ImageOut }) {
  const token = useApiToken();
  const session = useSession();
  const [data, setData] = useState(out.data ?? null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    if (out.data || !out.ref) return;
    const ctl = new AbortController();
    fetchResult(token, session.workspace.id, out.ref, ctl.signal).then(
      (r) => setData(typeof r.data === 'string' ? r.data : null),
      (e: Error) => e.name !== 'AbortError' && setError(e.message),
    );
    return () => ctl.abort();
  }, [out.data, out.ref, token, session]);
  if (error) return <div className="out-error">{error}</div>;
  if (!data) return <div className="muted">Loading image…</div>;
  return <img className="out-image" data-testid="output-image" alt="cell output" src={imageUrl(out.mime, data)} width={out.width} height={out.height} />;
}
