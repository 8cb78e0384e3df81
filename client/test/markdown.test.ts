import { describe, expect, it } from 'vitest';
import { parseInline, splitBlocks } from '../src/chat/markdown.ts';

describe('chat markdown', () => {
  it('renders bold, italic and inline code; code keeps its markers literal', () => {
    expect(parseInline('The total is **12**: see `a ** b` and *this* or _that_.')).toEqual([
      { kind: 'text', text: 'The total is ' },
      { kind: 'bold', text: '12' },
      { kind: 'text', text: ': see ' },
      { kind: 'code', text: 'a ** b' },
      { kind: 'text', text: ' and ' },
      { kind: 'italic', text: 'this' },
      { kind: 'text', text: ' or ' },
      { kind: 'italic', text: 'that' },
      { kind: 'text', text: '.' },
    ]);
  });
  it('leaves arithmetic, snake_case and unclosed markers alone', () => {
    for (const t of ['2 * 3 * 4', 'use frame_rate and max_value', 'streaming **bol', '@agent please summarise the notebook']) {
      expect(parseInline(t)).toEqual([{ kind: 'text', text: t }]);
    }
  });
  it('splits fenced code blocks, also an unclosed one while streaming', () => {
    expect(splitBlocks('Run this:\n```js\nconst a = 1;\n```\nthen done')).toEqual([
      { kind: 'text', text: 'Run this:\n' },
      { kind: 'code', lang: 'js', text: 'const a = 1;' },
      { kind: 'text', text: 'then done' },
    ]);
    expect(splitBlocks('Here:\n```sql\nSELECT 1')).toEqual([
      { kind: 'text', text: 'Here:\n' },
      { kind: 'code', lang: 'sql', text: 'SELECT 1' },
    ]);
    expect(splitBlocks('no code')).toEqual([{ kind: 'text', text: 'no code' }]);
  });
});

describe('workspace links', () => {
  it('splits [label](plexus:<kind>/<id>) out of text, decoding the id; other links stay text', async () => {
    const { splitWorkspaceLinks } = await import('../src/chat/markdown.ts');
    expect(splitWorkspaceLinks('see [cell 3](plexus:cell/c_ab12) and [table rois](plexus:table/my%20rois), not [x](https://example.org)')).toEqual([
      { kind: 'text', text: 'see ' },
      { kind: 'workspace', link: { kind: 'cell', id: 'c_ab12', label: 'cell 3' } },
      { kind: 'text', text: ' and ' },
      { kind: 'workspace', link: { kind: 'table', id: 'my rois', label: 'table rois' } },
      { kind: 'text', text: ', not [x](https://example.org)' },
    ]);
    expect(splitWorkspaceLinks('[bad](plexus:file/x)')).toEqual([{ kind: 'text', text: '[bad](plexus:file/x)' }]);
  });
});
