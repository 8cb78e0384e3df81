/**
 * The drawn map: the WebGL canvas (AtlasRenderer, regl-scatterplot) and HTML/SVG overlays that
 * follow its camera — cluster labels, the shared selection's outline, other people's hovered
 * points as rings with their names, and the tooltip of the row under the mouse. Loaded on demand
 * (React.lazy), with the renderer.
 * Effects: WebGL, a ResizeObserver, a window key listener (Escape cancels a brush in progress).
 */
import { useEffect, useLayoutEffect, useRef, useState, type MutableRefObject } from 'react';
import type { AtlasCoords, AtlasSelection } from '@plexus/shared';
import type { AtlasRow } from './api.ts';
import type { Coloring } from './colors.ts';
import { mapToScreen, selectionOutline, type Normalizer, type Vec2, type Viewport } from './geometry.ts';
import type { AtlasPoints } from './points.ts';
import type { AtlasPeer } from './presence.ts';
import { AtlasRenderer, type DrawTiming, type Tool } from './renderer.ts';

declare global {
  interface Window {
    /** Test and debugging hook: the map on this page (screen positions of map coordinates). */
    __plexusAtlas?: { mapToScreen(x: number, y: number): Vec2; points(): { x: number[]; y: number[]; row: number[] }; canvas: HTMLCanvasElement; lastDraw(): DrawTiming | null };
  }
}

export interface MapCanvasProps {
  points: AtlasPoints;
  nz: Normalizer;
  ndc: { x: Float32Array; y: Float32Array };
  colors: Coloring;
  selected: Uint32Array;
  selection: AtlasSelection | null;
  labels: NonNullable<AtlasCoords['labels']>;
  peers: AtlasPeer[];
  rowIdx: Int32Array;
  hover: number | null;
  hoverRow: AtlasRow | null;
  tool: Tool;
  /** View-only people look and hover; they do not brush. */
  readOnly: boolean;
  density: boolean;
  follow: { target: Vec2; distance: number } | null;
  resetRef: MutableRefObject<(() => void) | null>;
  onBrush(vertices: Vec2[], kind: 'rect' | 'lasso'): void;
  onHover(index: number | null): void;
  onCamera(target: Vec2, distance: number): void;
  onUserMove(): void;
  onError(message: string): void;
}

const TOOLTIP_FIELDS = 8;
const fmtValue = (v: unknown): string => {
  if (v === null || v === undefined) return '–';
  if (typeof v === 'number') return Number.isInteger(v) ? v.toLocaleString() : Number(v.toPrecision(5)).toLocaleString();
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return s.length > 80 ? `${s.slice(0, 79)}…` : s;
};

export default function MapCanvas(props: MapCanvasProps) {
  const wrapRef = useRef<HTMLDivElement>(null);
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const rendererRef = useRef<AtlasRenderer | null>(null);
  const propsRef = useRef(props);
  propsRef.current = props;
  const [vp, setVp] = useState<Viewport | null>(null);

  // The renderer lives as long as this component (one set of coordinates).
  useLayoutEffect(() => {
    const wrap = wrapRef.current!;
    const canvas = canvasRef.current!;
    const rect = wrap.getBoundingClientRect();
    let r: AtlasRenderer;
    try {
      r = new AtlasRenderer(canvas, { width: Math.round(rect.width) || 300, height: Math.round(rect.height) || 300 }, props.points.n, {
        onBrush: (v, kind) => propsRef.current.onBrush(v, kind),
        onHover: (i) => propsRef.current.onHover(i),
        onView: () => {
          setVp(r.viewport());
          const cam = r.camera();
          propsRef.current.onCamera(cam.target, cam.distance);
        },
        onUserMove: () => propsRef.current.onUserMove(),
      }, props.readOnly);
    } catch (e) {
      propsRef.current.onError(`The map could not be drawn: ${(e as Error).message}`);
      return;
    }
    rendererRef.current = r;
    props.resetRef.current = () => r.resetView();
    const ro = new ResizeObserver(([entry]) => {
      const box = entry!.contentRect;
      r.resize(Math.round(box.width), Math.round(box.height));
    });
    ro.observe(wrap);
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape' && r.cancelBrush()) e.preventDefault();
    };
    window.addEventListener('keydown', onKey);
    window.__plexusAtlas = {
      mapToScreen: (x, y) => mapToScreen(propsRef.current.nz, r.viewport(), [x, y]),
      points: () => ({ x: Array.from(propsRef.current.points.x), y: Array.from(propsRef.current.points.y), row: Array.from(propsRef.current.points.row) }),
      canvas,
      lastDraw: () => r.lastDraw,
    };
    return () => {
      ro.disconnect();
      window.removeEventListener('keydown', onKey);
      props.resetRef.current = null;
      rendererRef.current = null;
      if (window.__plexusAtlas?.canvas === canvas) delete window.__plexusAtlas;
      r.destroy();
    };
    // Once per mount: MapView remounts this component for new coordinates.
  }, []);

  const { ndc, colors, selected, tool, density, follow } = props;
  useEffect(() => {
    void rendererRef.current?.draw(ndc.x, ndc.y, colors.z, colors.palette, colors.active);
  }, [ndc, colors]);
  useEffect(() => rendererRef.current?.setSelection(selected), [selected]);
  useEffect(() => rendererRef.current?.setTool(tool), [tool]);
  useEffect(() => rendererRef.current?.setDensity(density), [density]);
  useEffect(() => {
    if (follow) rendererRef.current?.lookAt(follow.target, follow.distance);
  }, [follow]);

  const { nz, points, labels, selection, peers, rowIdx, hover, hoverRow } = props;
  const toScreen = (p: Vec2): Vec2 | null => (vp ? mapToScreen(nz, vp, p) : null);
  const inView = (s: Vec2 | null, margin = 0): s is Vec2 => !!s && !!vp && s[0] >= -margin && s[1] >= -margin && s[0] <= vp.width + margin && s[1] <= vp.height + margin;

  const outline = selection && vp ? selectionOutline(selection).map((p) => toScreen(p)!) : null;
  const pointAt = (i: number): Vec2 => [points.x[i]!, points.y[i]!];
  const hoverAt = hover !== null ? toScreen(pointAt(hover)) : null;

  return (
    <div
      className={`atlas-canvas-wrap tool-${tool}`}
      ref={wrapRef}
      data-testid="atlas-canvas"
      data-points={points.n}
      // Focusable, and focused by a click: Delete (clear the selection) then reaches the panel.
      tabIndex={0}
      onPointerDown={() => wrapRef.current?.focus({ preventScroll: true })}
    >
      <canvas ref={canvasRef} className="atlas-canvas" aria-label={`Map of ${points.n.toLocaleString()} rows: drag to pan, wheel to zoom, Shift+drag to select a rectangle`} role="img" />
      {vp && (
        <svg className="atlas-overlay" width={vp.width} height={vp.height} aria-hidden="true">
          {outline && <polygon data-testid="atlas-outline" points={outline.map((p) => `${p[0].toFixed(1)},${p[1].toFixed(1)}`).join(' ')} />}
        </svg>
      )}
      {vp &&
        labels.map((l) => {
          const s = toScreen([l.x, l.y]);
          if (!inView(s)) return null;
          return (
            <div
              key={l.cluster}
              className="atlas-label"
              data-testid="atlas-label"
              data-cluster={l.cluster}
              // Centred on its cluster, but kept inside the canvas near the left and right edges.
              style={{ transform: `translate(${s[0]}px, ${s[1]}px) translate(${s[0] < vp.width * 0.2 ? -10 : s[0] > vp.width * 0.8 ? -90 : -50}%, -50%)` }}
              title={`${l.text} (${l.size.toLocaleString()} rows)`}
            >
              {l.text}
            </div>
          );
        })}
      {vp &&
        peers.map((p) => {
          const r = p.atlas.hover;
          const i = r !== null && r < rowIdx.length ? rowIdx[r]! : -1;
          if (i < 0) return null;
          const s = toScreen(pointAt(i));
          if (!inView(s, 8)) return null;
          return (
            <div key={p.clientId} className="atlas-ring" data-testid="atlas-peer-hover" data-name={p.user.name} data-row={r} style={{ transform: `translate(${s[0]}px, ${s[1]}px)`, borderColor: p.user.color }}>
              <span className="atlas-ring-name" style={{ background: p.user.color }}>
                {p.user.name}
              </span>
            </div>
          );
        })}
      {hoverAt && inView(hoverAt) && vp && (
        <div
          className="atlas-tooltip"
          data-testid="atlas-tooltip"
          role="tooltip"
          style={{
            left: hoverAt[0] > vp.width * 0.6 ? undefined : hoverAt[0] + 12,
            right: hoverAt[0] > vp.width * 0.6 ? vp.width - hoverAt[0] + 12 : undefined,
            top: Math.min(hoverAt[1] + 12, Math.max(0, vp.height - 180)),
          }}
        >
          <div className="atlas-tooltip-head">row {points.row[hover!]!.toLocaleString()}</div>
          {hoverRow ? (
            <table>
              <tbody>
                {Object.entries(hoverRow)
                  .filter(([k]) => k !== 'row')
                  .slice(0, TOOLTIP_FIELDS)
                  .map(([k, v]) => (
                    <tr key={k}>
                      <th>{k}</th>
                      <td>{fmtValue(v)}</td>
                    </tr>
                  ))}
              </tbody>
            </table>
          ) : (
            <div className="muted">…</div>
          )}
        </div>
      )}
      {follow && <div className="atlas-following-badge">following</div>}
    </div>
  );
}
