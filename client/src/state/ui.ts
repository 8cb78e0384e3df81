/**
 * Local UI state of the workspace page (never shared): panel sizes and which popovers are open.
 * Panel sizes persist in localStorage so the layout survives reloads.
 */
import { create } from 'zustand';
import { persist } from 'zustand/middleware';

export const PANEL_LIMITS = {
  chat: { min: 240, max: 640 },
  viewer: { min: 200, max: 1200 },
  atlas: { min: 320, max: 1400 },
} as const;

const clamp = (v: number, lo: number, hi: number) => Math.max(lo, Math.min(hi, v));

interface UiState {
  chatWidth: number;
  viewerWidth: number;
  viewerCollapsed: boolean;
  helpOpen: boolean;
  shareOpen: boolean;
  /** The data panel above the notebook is open. */
  dataOpen: boolean;
  setDataOpen(open: boolean): void;
  /** The analyses panel above the notebook is open. */
  analysesOpen: boolean;
  setAnalysesOpen(open: boolean): void;
  /** The history panel above the notebook is open. */
  historyOpen: boolean;
  setHistoryOpen(open: boolean): void;
  /** The atlas panel (beside the notebook) is open, and its width. */
  atlasOpen: boolean;
  setAtlasOpen(open: boolean): void;
  atlasWidth: number;
  setAtlasWidth(w: number): void;
  setChatWidth(w: number): void;
  setViewerWidth(w: number): void;
  toggleViewer(): void;
  chatCollapsed: boolean;
  toggleChat(): void;
  setHelpOpen(open: boolean): void;
  setShareOpen(open: boolean): void;
}

/**
 * First widths for this window (until the person drags a splitter, which is remembered): the
 * notebook keeps the larger share — at 1,400 px about 690 px, room for its toolbar on one line.
 */
export function defaultPanelWidths(windowWidth: number): { chatWidth: number; viewerWidth: number; atlasWidth: number } {
  const w = Number.isFinite(windowWidth) && windowWidth > 0 ? windowWidth : 1400;
  return {
    chatWidth: clamp(Math.round(w * 0.23), PANEL_LIMITS.chat.min, PANEL_LIMITS.chat.max),
    viewerWidth: clamp(Math.round(w * 0.28), PANEL_LIMITS.viewer.min, PANEL_LIMITS.viewer.max),
    atlasWidth: clamp(Math.round(w * 0.36), PANEL_LIMITS.atlas.min, PANEL_LIMITS.atlas.max),
  };
}

const firstWidths = defaultPanelWidths(typeof window === 'undefined' ? 1400 : window.innerWidth);

export const useUi = create<UiState>()(
  persist(
    (set) => ({
      chatWidth: firstWidths.chatWidth,
      viewerWidth: firstWidths.viewerWidth,
      viewerCollapsed: false,
      chatCollapsed: false,
      helpOpen: false,
      shareOpen: false,
      dataOpen: false,
      setDataOpen: (dataOpen) => set({ dataOpen }),
      analysesOpen: false,
      setAnalysesOpen: (analysesOpen) => set({ analysesOpen }),
      historyOpen: false,
      setHistoryOpen: (historyOpen) => set({ historyOpen }),
      atlasOpen: false,
      setAtlasOpen: (atlasOpen) => set({ atlasOpen }),
      atlasWidth: firstWidths.atlasWidth,
      setAtlasWidth: (w) => set({ atlasWidth: clamp(Math.round(w), PANEL_LIMITS.atlas.min, PANEL_LIMITS.atlas.max) }),
      setChatWidth: (w) => set({ chatWidth: clamp(Math.round(w), PANEL_LIMITS.chat.min, PANEL_LIMITS.chat.max) }),
      setViewerWidth: (w) => set({ viewerWidth: clamp(Math.round(w), PANEL_LIMITS.viewer.min, PANEL_LIMITS.viewer.max) }),
      toggleViewer: () => set((s) => ({ viewerCollapsed: !s.viewerCollapsed })),
      toggleChat: () => set((s) => ({ chatCollapsed: !s.chatCollapsed })),
      setHelpOpen: (helpOpen) => set({ helpOpen }),
      setShareOpen: (shareOpen) => set({ shareOpen }),
    }),
    {
      name: 'plexus.ui',
      // Popovers start closed on every load; only the layout persists.
      partialize: (s) => ({ chatWidth: s.chatWidth, viewerWidth: s.viewerWidth, viewerCollapsed: s.viewerCollapsed, chatCollapsed: s.chatCollapsed, dataOpen: s.dataOpen, analysesOpen: s.analysesOpen, atlasOpen: s.atlasOpen, atlasWidth: s.atlasWidth }),
    },
  ),
);
