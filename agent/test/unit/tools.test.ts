/** Tool argument validation, the schemas of every tool, and the viewer source policy. */
import { describe, expect, it } from 'vitest';
import { parseArguments, validate, ToolArgumentError } from '../../src/tools/validate.ts';
import { ALL_TOOLS, TOOLS_BY_NAME, openAiTools } from '../../src/tools/index.ts';
import { refuseLayerSources, refuseSource } from '../../src/tools/source-policy.ts';

describe('tool argument validation', () => {
  const schema = TOOLS_BY_NAME.get('create_cell')!.parameters;
  it('accepts valid arguments', () => {
    expect(parseArguments(schema, '{"kind":"code","source":"1+1"}')).toEqual({ kind: 'code', source: '1+1' });
    expect(parseArguments(schema, '{"kind":"sql","source":"select 1","name":"t","after_cell_id":null}')).toMatchObject({ name: 't' });
  });
  it('reports every problem with its path', () => {
    const err = (() => {
      try {
        parseArguments(schema, '{"kind":"python","source":3,"extra":true}');
      } catch (e) {
        return e as ToolArgumentError;
      }
      return null;
    })()!;
    expect(err).toBeInstanceOf(ToolArgumentError);
    expect(err.message).toContain('arguments.kind: must be one of "code", "sql", "markdown"');
    expect(err.message).toContain('arguments.source: expected string, got integer');
    expect(err.message).toContain('arguments.extra: is not a known argument');
  });
  it('refuses malformed JSON, non-objects and missing fields clearly', () => {
    expect(() => parseArguments(schema, '{"kind": "code", ')).toThrow(/not valid JSON/);
    expect(() => parseArguments(schema, '[1,2]')).toThrow(/expected object, got array/);
    expect(() => parseArguments(schema, '{}')).toThrow(/arguments.kind: is required.*arguments.source: is required/);
  });
  it('checks numbers, lengths, nested arrays and anyOf', () => {
    const run = TOOLS_BY_NAME.get('run_cell')!.parameters;
    expect(validate(run, { cell_id: 'c_1', timeout_s: 0 })).toEqual(['arguments.timeout_s: must be ≥ 1']);
    expect(validate(run, { cell_id: 'c_1', timeout_s: Number.NaN })).toContain('arguments.timeout_s: must be a finite number');
    const ann = TOOLS_BY_NAME.get('add_annotations')!.parameters;
    expect(validate(ann, { layer: 'rois', points: [{ x: 1, y: 2 }, { x: 'a' }] })).toEqual(['arguments.points[1].y: is required', 'arguments.points[1].x: expected number, got string']);
    const move = TOOLS_BY_NAME.get('move_cell')!.parameters;
    expect(validate(move, { cell_id: 'c_1', after_cell_id: null })).toEqual([]);
    expect(validate(move, { cell_id: 'c_1', after_cell_id: 5 })).toEqual(['arguments.after_cell_id: does not match any allowed form']);
  });
  it('a tool is one definition: call() validates the raw arguments against its schema before running', async () => {
    const tool = TOOLS_BY_NAME.get('get_cell')!;
    await expect(tool.call({} as never, '{"cell_id": 5}')).rejects.toThrow(/arguments.cell_id: expected string, got integer/);
    await expect(tool.call({} as never, '{"cell_id": "c_1", "x": 1}')).rejects.toThrow(/arguments.x: is not a known argument/);
  });
  it('every tool has a unique name, a description and an object schema without unknown keys', () => {
    expect(new Set(ALL_TOOLS.map((t) => t.name)).size).toBe(ALL_TOOLS.length);
    for (const t of ALL_TOOLS) {
      expect(t.description.length).toBeGreaterThan(20);
      expect(t.parameters.type).toBe('object');
      expect(t.parameters.additionalProperties).toBe(false);
    }
    expect(openAiTools()[0]).toMatchObject({ type: 'function', function: { name: 'get_notebook_state' } });
  });
});

describe('viewer source policy', () => {
  it('allows this server\'s volumes, local annotations and configured prefixes only', () => {
    expect(refuseSource('precomputed://plexus://volumes/calcium-demo/movie', [])).toBeNull();
    expect(refuseSource('zarr://plexus://volumes/ds/layer', [])).toBeNull();
    expect(refuseSource('local://annotations', [])).toBeNull();
    expect(refuseSource('precomputed://gs://neuroglancer-public-data/flyem', ['gs://neuroglancer-public-data/'])).toBeNull();
  });
  it('refuses outside hosts, files, traversal and look-alikes', () => {
    for (const url of [
      'precomputed://https://evil.example.com/x',
      'precomputed://http://127.0.0.1:4455/volumes/../../etc',
      'precomputed://plexus://volumes/../secret',
      'precomputed://plexus://volumes/%2e%2e/secret',
      'nifti://file:///etc/passwd',
      'https://plexus://volumes.evil.com/x',
      'precomputed://gs://neuroglancer-public-data.evil/x',
      'data:application/json,{}',
    ]) {
      expect(refuseSource(url, ['gs://neuroglancer-public-data/']), url).not.toBeNull();
    }
    expect(refuseLayerSources({ url: 'precomputed://https://evil.example.com/x' }, [])).toMatch(/outside this workspace/);
    expect(refuseLayerSources(['precomputed://plexus://volumes/a/b', 'precomputed://https://x.y/z'], [])).toMatch(/x\.y/);
    expect(refuseLayerSources(undefined, [])).toMatch(/no source/);
  });
});
