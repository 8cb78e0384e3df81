/**
 * Presenter mode's controls: the header's Present button (editors only; view-only links can follow
 * but not present) and the bar under the header while someone presents — for the presenter, who
 * follows and "Bring everyone here"; for everyone else "Following <name> · Stop" or
 * "<name> is presenting · Rejoin". Connected components (presenter controller of the session).
 */
import { usePresenter } from './usePresenter.ts';

export const PRESENT_SHORTCUT = 'Ctrl+Alt+P';

export function PresentButton() {
  const [s, c] = usePresenter();
  if (!s.canPresent) return null;
  const other = s.presentation && !s.isPresenter ? s.presentation.name : null;
  return (
    <button
      className={`btn btn-small toggle${s.isPresenter ? ' is-on' : ''}`}
      aria-pressed={s.isPresenter}
      data-testid="present-toggle"
      title={
        s.isPresenter
          ? `Stop presenting (${PRESENT_SHORTCUT})`
          : other
            ? `Take over from ${other}: everyone follows you instead`
            : `Present: everyone here follows your notebook, panels and viewer (${PRESENT_SHORTCUT})`
      }
      onClick={() => (s.isPresenter ? c.stop() : c.start())}
    >
      {s.isPresenter ? 'Stop presenting' : 'Present'}
    </button>
  );
}

export function PresenterBar() {
  const [s, c] = usePresenter();
  const p = s.presentation;
  if (!p) return null;
  if (s.isPresenter) {
    const names = s.followers.map((f) => f.name).join(', ');
    return (
      <div className="presenter-bar is-presenting" data-testid="presenter-bar" data-role="presenter" data-following="false" data-presenter={p.name} role="status">
        <span className="live-dot" aria-hidden="true" />
        <strong>You are presenting</strong>
        <span className="muted" data-testid="presenter-followers" data-count={s.followers.length} title={names || 'Nobody follows yet'}>
          {s.followers.length === 0 ? 'nobody follows yet' : `${s.followers.length} following: ${names}`}
        </span>
        <span className="spacer" />
        <button className="btn btn-small" data-testid="presenter-bring-here" title="Everyone, also those who look around on their own, jumps to your place in the notebook once" onClick={() => c.bringEveryoneHere()}>
          Bring everyone here
        </button>
        <button className="btn btn-small" data-testid="presenter-stop" title={`Stop presenting (${PRESENT_SHORTCUT})`} onClick={() => c.stop()}>
          Stop presenting
        </button>
      </div>
    );
  }
  return (
    <div
      className={`presenter-bar${s.following ? ' is-following' : ''}`}
      data-testid="presenter-bar"
      data-role="follower"
      data-following={s.following ? 'true' : 'false'}
      data-connected={s.presenterConnected ? 'true' : 'false'}
      data-presenter={p.name}
      role="status"
    >
      <span className="live-dot" aria-hidden="true" />
      {s.following ? <strong>Following {p.name}</strong> : <strong>{p.name} is presenting</strong>}
      {!s.presenterConnected && <span className="muted">(not connected)</span>}
      {s.note && (
        <span className="muted" data-testid="presenter-note">
          {s.note}
        </span>
      )}
      <span className="spacer" />
      {s.following ? (
        <button className="btn btn-small" data-testid="presenter-unfollow" title={`Stop following ${p.name} (${PRESENT_SHORTCUT})`} onClick={() => c.unfollow()}>
          Stop
        </button>
      ) : (
        <button className="btn btn-small" data-testid="presenter-rejoin" title={`Follow ${p.name} again (${PRESENT_SHORTCUT})`} onClick={() => c.rejoin()}>
          Rejoin
        </button>
      )}
      {s.canPresent && !s.presenterConnected && (
        <button className="btn btn-small" data-testid="presenter-end" title={`End ${p.name}'s presentation`} onClick={() => c.end()}>
          End presentation
        </button>
      )}
    </div>
  );
}
