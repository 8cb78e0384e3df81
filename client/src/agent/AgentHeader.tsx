/**
 * The agent's line in the chat header: "Agent ready (model …)" when an agent peer is in the
 * awareness, otherwise how to enable it (highlighted when someone just addressed it); and the
 * workspace setting "Agent edits: Directly / Propose changes" (writers change it, all see it).
 */
import { useEffect, useState } from 'react';
import { canWrite, getAgentInstructions, MAX_INSTRUCTIONS_CHARS, roots, setAgentInstructions, setSetting, type WorkspaceSettings } from '@plexus/shared';
import { useYVersion } from '../collab/useY.ts';
import { useSession } from '../collab/context.tsx';
import { useAgentUi } from './agentUi.ts';
import { useAgentPeer, useSettings } from './useAgent.ts';

export const AGENT_OFFLINE_HINT =
  'Agent offline — set OPENAI_API_KEY (and OPENAI_BASE_URL for another OpenAI-compatible endpoint) and restart Plexus to enable it.';

const MODES: Array<{ mode: WorkspaceSettings['agentMode']; label: string; title: string }> = [
  { mode: 'direct', label: 'Directly', title: 'The agent changes the workspace itself (destructive changes still need an Accept)' },
  { mode: 'propose', label: 'Propose changes', title: 'The agent proposes every change as a card someone accepts' },
];

const APPROVALS: Array<{ mode: WorkspaceSettings['planApproval']; label: string; title: string }> = [
  { mode: 'auto', label: 'Start at once', title: 'An analysis plan starts as soon as the agent has made it (anyone can still edit or stop it)' },
  { mode: 'wait', label: 'Wait for Go', title: 'The agent shows its plan and assumptions and waits until someone presses Go' },
];

/** The workspace's agent instructions: one shared text everyone sees and edits; part of every agent prompt. */
function InstructionsEditor({ writer }: { writer: boolean }) {
  const session = useSession();
  const [open, setOpen] = useState(false);
  useYVersion(roots(session.doc).meta, true);
  const text = getAgentInstructions(session.doc);
  return (
    <div className="agent-instructions">
      <button className="link-btn" aria-expanded={open} data-testid="agent-instructions-toggle" onClick={() => setOpen(!open)}>
        {open ? '▾' : '▸'} Agent instructions{text ? '' : ' (none)'}
      </button>
      {open &&
        (writer ? (
          <textarea
            data-testid="agent-instructions"
            rows={4}
            maxLength={MAX_INSTRUCTIONS_CHARS}
            placeholder="What the agent should always know or do here, e.g. “Frame rate is 30 Hz; cite the methods you use.”"
            value={text}
            onChange={(e) => setAgentInstructions(session.doc, e.target.value, session.origin)}
          />
        ) : (
          <p className="muted" data-testid="agent-instructions">{text || 'No instructions.'}</p>
        ))}
    </div>
  );
}

type Choice<V> = { mode: V; label: string; title: string };

/** One workspace setting as segmented buttons (writers) or its value (viewers). */
function SettingChoice<K extends 'agentMode' | 'planApproval'>(p: { setting: K; label: string; testId: string; choices: Array<Choice<WorkspaceSettings[K]>>; writer: boolean; value: WorkspaceSettings[K] }) {
  const session = useSession();
  return (
    <div className="agent-mode" role="group" aria-label={p.label} data-testid={p.testId} data-mode={p.value}>
      <span className="muted">{p.label}:</span>
      {p.writer ? (
        <span className="segmented">
          {p.choices.map((m) => (
            <button
              key={m.mode}
              className={`btn btn-small${p.value === m.mode ? ' is-on' : ''}`}
              aria-pressed={p.value === m.mode}
              data-testid={`${p.testId}-${m.mode}`}
              title={m.title}
              onClick={() => p.value !== m.mode && setSetting(session.doc, p.setting, m.mode, session.origin)}
            >
              {m.label}
            </button>
          ))}
        </span>
      ) : (
        <strong data-testid={`${p.testId}-value`}>{p.choices.find((m) => m.mode === p.value)?.label}</strong>
      )}
    </div>
  );
}

export function AgentHeader() {
  const session = useSession();
  const peer = useAgentPeer(session.awareness);
  const settings = useSettings(session.doc);
  const nudge = useAgentUi((s) => s.offlineNudge);
  const [highlight, setHighlight] = useState(false);
  useEffect(() => {
    if (!nudge) return;
    setHighlight(true);
    const t = setTimeout(() => setHighlight(false), 6000);
    return () => clearTimeout(t);
  }, [nudge]);
  const writer = canWrite(session.role);
  return (
    <div className="agent-header">
      {peer ? (
        <div className="agent-ready" data-testid="agent-ready">
          <span className="dot" style={{ backgroundColor: peer.color }} aria-hidden="true" />
          {peer.name} ready{peer.model ? ` (model ${peer.model})` : ''}
        </div>
      ) : (
        <div className={`agent-offline${highlight ? ' is-highlighted' : ''}`} data-testid="agent-offline" data-highlighted={highlight ? 'true' : undefined} role={highlight ? 'alert' : undefined}>
          {AGENT_OFFLINE_HINT}
        </div>
      )}
      <SettingChoice setting="agentMode" label="Agent edits" testId="agent-mode" choices={MODES} writer={writer} value={settings.agentMode} />
      <SettingChoice setting="planApproval" label="Plans" testId="plan-approval" choices={APPROVALS} writer={writer} value={settings.planApproval} />
      <InstructionsEditor writer={writer} />
    </div>
  );
}
