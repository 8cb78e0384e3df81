/** `{{category}}` placeholders in chat answers: parsing, finding the category, the SQL of "Open as table". */
import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { createAtlasMap, initWorkspace, listAtlasMaps, saveAtlasCategory, serverOrigin, userOrigin } from '@plexus/shared';
import { splitPlaceholders } from '../src/chat/markdown.ts';
import { categorySql, findCategory } from '../src/chat/categories.ts';

describe('category placeholders', () => {
  it('splits {{names}} out of text; braces that are not a placeholder stay text', () => {
    expect(splitPlaceholders('Two groups: {{bright cells}} and {{quiet}}.')).toEqual([
      { kind: 'text', text: 'Two groups: ' },
      { kind: 'placeholder', name: 'bright cells', raw: '{{bright cells}}' },
      { kind: 'text', text: ' and ' },
      { kind: 'placeholder', name: 'quiet', raw: '{{quiet}}' },
      { kind: 'text', text: '.' },
    ]);
    expect(splitPlaceholders('a {single} brace, {{}} and {{a\nb}}')).toEqual([{ kind: 'text', text: 'a {single} brace, {{}} and {{a\nb}}' }]);
  });

  it('finds a category in the newest map that has it; unknown names find nothing', () => {
    const doc = new Y.Doc();
    initWorkspace(doc, { title: 't', created: 1 }, serverOrigin('t'));
    const o = userOrigin('ada', 'Ada');
    const first = createAtlasMap(doc, { table: 'rois', method: 'pca', columns: ['a'], id: 'm_1' }, { id: 'ada' }, o);
    const second = createAtlasMap(doc, { table: 'rois', method: 'umap', columns: ['a'], id: 'm_2' }, { id: 'ada' }, o);
    saveAtlasCategory(doc, first, 'bright', { rows: [1], note: 'old', by: 'ada', at: 1 }, o);
    saveAtlasCategory(doc, second, 'bright', { rows: [2, 3], note: 'new', by: 'ada', at: 2 }, o);
    const found = findCategory(listAtlasMaps(doc), 'bright');
    expect(found?.category.rows).toEqual([2, 3]);
    expect(findCategory(listAtlasMaps(doc), 'nope')).toBeNull();
  });

  it('"Open as table" selects the rows by their position in the table', () => {
    expect(categorySql('my "odd" table', [4, 7])).toBe('SELECT * EXCLUDE (row_in_table) FROM (SELECT (row_number() OVER ()) - 1 AS row_in_table, * FROM "my ""odd"" table")\nWHERE row_in_table IN (4, 7)');
  });
});
