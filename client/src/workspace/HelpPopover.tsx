/** The `?` button: keyboard shortcuts of the workspace. */
import { SHORTCUTS } from '../notebook/shortcuts.ts';
import { useUi } from '../state/ui.ts';
import { Popover } from '../ui/Popover.tsx';

export function HelpPopover() {
  const open = useUi((s) => s.helpOpen);
  const setOpen = useUi((s) => s.setHelpOpen);
  return (
    <div className="popover-anchor">
      <button className="icon-btn round" data-testid="help" aria-label="Keyboard shortcuts" title="Keyboard shortcuts (?)" onClick={() => setOpen(!open)}>
        ?
      </button>
      <Popover open={open} onClose={() => setOpen(false)} label="Keyboard shortcuts" className="help-popover" testId="help-popover">
        <h3>Keyboard shortcuts</h3>
        <table className="shortcuts">
          <tbody>
            {SHORTCUTS.map((s, i) => (
              <tr key={i}>
                <td>
                  <kbd>{s.keys}</kbd>
                </td>
                <td>{s.what}</td>
              </tr>
            ))}
          </tbody>
        </table>
        <p className="muted">On macOS use ⌘ for Ctrl in undo/redo, and ⌥ for Alt.</p>
      </Popover>
    </div>
  );
}
