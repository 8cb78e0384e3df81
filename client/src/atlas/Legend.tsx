/** The colour legend of a map: a numeric column's range (min–max on viridis) or a categorical column's categories. */
import { categoryColor, MISSING_COLOR, sequentialGradient } from './colors.ts';
import type { PointsColor } from './points.ts';

const fmt = (v: number) => (Number.isFinite(v) ? (Math.abs(v) >= 1e5 || (Math.abs(v) < 1e-3 && v !== 0) ? v.toExponential(2) : Number(v.toPrecision(4)).toLocaleString()) : '–');
const MAX_SHOWN = 24;

export function Legend({ color }: { color: PointsColor }) {
  if (color.kind === 'numeric')
    return (
      <div className="atlas-legend" data-testid="atlas-legend" data-kind="numeric" aria-label={`Colour: ${color.column}, from ${fmt(color.min)} to ${fmt(color.max)}`}>
        <div className="atlas-legend-title">{color.column}</div>
        <div className="atlas-legend-bar" style={{ background: sequentialGradient() }} />
        <div className="atlas-legend-range">
          <span data-testid="atlas-legend-min">{fmt(color.min)}</span>
          <span data-testid="atlas-legend-max">{fmt(color.max)}</span>
        </div>
        <div className="atlas-legend-item">
          <span className="atlas-swatch is-round" style={{ background: MISSING_COLOR }} /> missing
        </div>
      </div>
    );
  const shown = color.categories.slice(0, MAX_SHOWN);
  return (
    <div className="atlas-legend" data-testid="atlas-legend" data-kind="categorical" aria-label={`Colour: ${color.column}, ${color.categories.length} categories`}>
      <div className="atlas-legend-title">{color.column}</div>
      <ul>
        {shown.map((c, i) => (
          <li key={i} className="atlas-legend-item">
            <span className="atlas-swatch is-round" style={{ background: categoryColor(i) }} aria-hidden="true" />
            {c === '' ? <em>(empty)</em> : c}
          </li>
        ))}
        {color.categories.length > MAX_SHOWN && <li className="muted">… {color.categories.length - MAX_SHOWN} more</li>}
        <li className="atlas-legend-item">
          <span className="atlas-swatch is-round" style={{ background: MISSING_COLOR }} aria-hidden="true" /> missing
        </li>
      </ul>
    </div>
  );
}
