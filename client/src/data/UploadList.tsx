/** This browser's uploads: progress bar and Cancel while sending, the server's error when refused. */
import { useUploads } from './uploads.ts';

const STATUS: Record<string, string> = { uploading: 'uploading', processing: 'importing…', done: 'uploaded', error: 'failed', cancelled: 'cancelled' };

export function UploadList() {
  const { uploads, cancel, dismiss } = useUploads();
  if (!uploads.length) return null;
  return (
    <ul className="uploads">
      {uploads.map((u) => (
        <li key={u.id} className={`upload upload-${u.status}`} data-testid="upload" data-status={u.status}>
          <span className="upload-name">{u.fileName}</span>
          {(u.status === 'uploading' || u.status === 'processing') && (
            <progress data-testid="upload-progress" max={1} value={u.progress} aria-label={`Upload of ${u.fileName}`} />
          )}
          <span className="muted">
            {STATUS[u.status]}
            {u.status === 'uploading' ? ` ${Math.round(u.progress * 100)}%` : ''}
            {u.table ? ` as ${u.table}` : ''}
            {u.dataset ? ` → recording ${u.dataset} (importing: see Analyses)` : ''}
          </span>
          {u.status === 'uploading' || u.status === 'processing' ? (
            <button className="btn btn-small" data-testid="upload-cancel" onClick={() => cancel(u.id)}>
              Cancel
            </button>
          ) : (
            <button className="icon-btn" data-testid="upload-dismiss" aria-label="Dismiss" onClick={() => dismiss(u.id)}>
              ✕
            </button>
          )}
          {u.error && (
            <div className="upload-error" data-testid="upload-error" role="alert">
              {u.error}
            </div>
          )}
        </li>
      ))}
    </ul>
  );
}
