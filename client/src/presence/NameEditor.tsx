/** The local user's display name: click to edit; stored in localStorage and sent as presence. */
import { useState } from 'react';
import { useLocalUser } from '../state/user.ts';

export function NameEditor() {
  const { user, setName } = useLocalUser();
  const [draft, setDraft] = useState<string | null>(null);

  if (draft === null) {
    return (
      <button className="name-btn" data-testid="user-name" title="Your name as others see it — click to change" onClick={() => setDraft(user.name)}>
        <span className="name-dot" style={{ backgroundColor: user.color }} />
        {user.name}
      </button>
    );
  }
  const commit = () => {
    if (draft.trim()) setName(draft);
    setDraft(null);
  };
  return (
    <input
      className="name-input"
      data-testid="user-name-input"
      aria-label="Your name"
      autoFocus
      value={draft}
      maxLength={60}
      onChange={(e) => setDraft(e.target.value)}
      onBlur={commit}
      onKeyDown={(e) => {
        if (e.key === 'Enter') commit();
        if (e.key === 'Escape') setDraft(null);
      }}
    />
  );
}
