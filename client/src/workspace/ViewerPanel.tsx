/** Placeholder region for the Neuroglancer viewer (filled by the viewer issue). */
export function ViewerPanel() {
  return (
    <div className="viewer-panel" data-testid="viewer-panel" aria-label="Neuroglancer viewer">
      <div className="panel-title">Viewer</div>
      <div className="viewer-empty">
        <div className="viewer-empty-icon" aria-hidden="true">
          ◎
        </div>
        <p>Neuroglancer viewer</p>
        <p className="muted">The shared 3-D view will appear here.</p>
      </div>
    </div>
  );
}
