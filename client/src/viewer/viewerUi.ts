/** Local UI state of the viewer panel (never shared): navigation mode and its last notice. */
import { create } from 'zustand';
import type { NavMode } from './viewerBinding.ts';

interface ViewerUiState {
  mode: NavMode;
  notice: string | null;
  setMode(mode: NavMode, reason?: string): void;
  setNotice(notice: string | null): void;
}

export const useViewerUi = create<ViewerUiState>()((set) => ({
  mode: { kind: 'shared' },
  notice: null,
  setMode: (mode, reason) => set({ mode, notice: reason ?? null }),
  setNotice: (notice) => set({ notice }),
}));
