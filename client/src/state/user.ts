/**
 * The local person: a random stable id, a display name they can edit and a colour derived from
 * the id. Stored in localStorage `plexus.user` so it survives reloads and is shared by the tabs of
 * one browser. Local UI state, hence zustand.
 */
import { create } from 'zustand';
import { colorFor, randomId } from '@plexus/shared';

export interface LocalUser {
  id: string;
  name: string;
  color: string;
}

const KEY = 'plexus.user';

const ADJECTIVES = ['Curious', 'Patient', 'Careful', 'Bright', 'Quiet', 'Keen', 'Steady', 'Bold'];
const NOUNS = ['Axon', 'Neuron', 'Synapse', 'Dendrite', 'Glia', 'Soma', 'Cortex', 'Voxel'];

function defaultName(id: string): string {
  let h = 0;
  for (const c of id) h = (h * 31 + c.charCodeAt(0)) >>> 0;
  return `${ADJECTIVES[h % ADJECTIVES.length]} ${NOUNS[(h >>> 8) % NOUNS.length]}`;
}

function load(): LocalUser {
  try {
    const v = JSON.parse(localStorage.getItem(KEY) ?? 'null') as Partial<LocalUser> | null;
    if (v && typeof v.id === 'string' && v.id && typeof v.name === 'string') {
      return { id: v.id, name: v.name.trim() || defaultName(v.id), color: typeof v.color === 'string' ? v.color : colorFor(v.id) };
    }
  } catch {
    // Corrupt entry: start over with a fresh identity.
  }
  const id = `u_${randomId(12)}`;
  const user = { id, name: defaultName(id), color: colorFor(id) };
  localStorage.setItem(KEY, JSON.stringify(user));
  return user;
}

interface UserStore {
  user: LocalUser;
  setName(name: string): void;
}

export const useLocalUser = create<UserStore>((set, get) => ({
  user: load(),
  setName(name) {
    const clean = name.trim().slice(0, 60);
    if (!clean) return;
    const user = { ...get().user, name: clean };
    localStorage.setItem(KEY, JSON.stringify(user));
    set({ user });
  },
}));

// Another tab renamed us: follow, so every tab shows the same name.
window.addEventListener('storage', (e) => {
  if (e.key === KEY && e.newValue) {
    try {
      const v = JSON.parse(e.newValue) as LocalUser;
      if (v.id === useLocalUser.getState().user.id) useLocalUser.setState({ user: v });
    } catch {
      // ignore malformed writes
    }
  }
});
