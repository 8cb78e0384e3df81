/**
 * Viewer tools (seed 000): summary of the shared Neuroglancer state, set the view, LUT and shader
 * controls, add layers (this server's volumes or allowed sources only), add annotations (for
 * example from the rows of an uploaded ROI table), save a named view, export a state link.
 */
import {
  getSettings, getTable, layerForServedVolume, layerNames, maskedLink, readLayer, readViewerState, roiColumns, roiRowCentre,
  stateLink, summarizeViewer, viewerBefore, type Camera, type Json, type JsonObject, type NgLayer, type ServedLayer,
} from '@plexus/shared';
import { actResult, ok, ToolRefusal, defineTool, type Tool, type ToolContext } from './tool.ts';
import { refuseLayerSources } from './source-policy.ts';

const LAYER = { type: 'string', minLength: 1, maxLength: 200, description: 'Layer name (see get_viewer_state)' } as const;
const VEC = { type: 'array', items: { type: 'number' }, minItems: 2, maxItems: 5 } as const;

function requireLayer(ctx: ToolContext, name: string): NgLayer {
  const l = readLayer(ctx.doc, name);
  if (!l) throw new ToolRefusal(`no layer named "${name}" (layers: ${layerNames(ctx.doc).join(', ') || 'none'})`);
  return l;
}

const getViewerState = defineTool({
  name: 'get_viewer_state',
  description: 'The shared viewer: layers (type, source, visibility, shader controls, annotation counts), camera, layout and named views.',
  parameters: { type: 'object', properties: {}, additionalProperties: false },
  async run(ctx) {
    ctx.presence.focus('viewer');
    return ok(`${layerNames(ctx.doc).length} layers`, summarizeViewer(ctx.doc, { maxChars: 8000 }));
  },
});

const setView = defineTool({
  name: 'set_view',
  description: 'Moves the shared camera: position (viewer coordinates, e.g. [x, y, t]), zoom as cross_section_scale (smaller = closer), projection_scale, layout ("xy", "4panel", "3d", …).',
  parameters: {
    type: 'object',
    properties: {
      position: VEC,
      cross_section_scale: { type: 'number', minimum: 1e-9, maximum: 1e9 },
      projection_scale: { type: 'number', minimum: 1e-9, maximum: 1e12 },
      layout: { type: 'string', enum: ['xy', 'xz', 'yz', '3d', '4panel', 'xy-3d', 'xz-3d', 'yz-3d'] },
    },
    additionalProperties: false,
  },
  async run(ctx, a) {
    const camera: Camera = {};
    if (a.position) camera.position = a.position;
    if (a.cross_section_scale !== undefined) camera.crossSectionScale = a.cross_section_scale;
    if (a.projection_scale !== undefined) camera.projectionScale = a.projection_scale;
    const layout = typeof a.layout === 'string' ? a.layout : undefined;
    if (Object.keys(camera).length === 0 && !layout) throw new ToolRefusal('give at least one of position, cross_section_scale, projection_scale, layout');
    ctx.presence.focus('viewer');
    return actResult(await ctx.act('set_view', viewerBefore(ctx.doc, { type: 'set_camera', camera, ...(layout ? { layout } : {}) })), 'move the view');
  },
});

const setLayer = defineTool({
  name: 'set_layer',
  description: 'Shows/hides a layer or sets its opacity.',
  parameters: { type: 'object', properties: { layer: LAYER, visible: { type: 'boolean' }, opacity: { type: 'number', minimum: 0, maximum: 1 } }, required: ['layer'], additionalProperties: false },
  async run(ctx, a) {
    requireLayer(ctx, a.layer);
    const props: Record<string, Json> = {};
    if (a.visible !== undefined) props.visible = a.visible;
    if (a.opacity !== undefined) props.opacity = a.opacity;
    if (!Object.keys(props).length) throw new ToolRefusal('give visible or opacity');
    return actResult(await ctx.act('set_layer', viewerBefore(ctx.doc, { type: 'set_layer', layer: a.layer, props })), `change layer ${String(a.layer)}`);
  },
});

const setLut = defineTool({
  name: 'set_lut',
  description: 'Sets the display range (LUT / contrast) of an image layer: values ≤ min are black, ≥ max white. Uses the layer\'s `normalized` shader control.',
  parameters: { type: 'object', properties: { layer: LAYER, min: { type: 'number' }, max: { type: 'number' } }, required: ['layer', 'min', 'max'], additionalProperties: false },
  async run(ctx, a) {
    const l = requireLayer(ctx, a.layer);
    if (l.type !== 'image') throw new ToolRefusal(`layer "${l.name}" is a ${String(l.type)} layer; the LUT applies to image layers`);
    if (a.max <= a.min) throw new ToolRefusal('max must be greater than min');
    const action = viewerBefore(ctx.doc, { type: 'set_shader_control', layer: l.name, control: 'normalized', value: { range: [a.min, a.max] } });
    return actResult(await ctx.act('set_lut', action), `LUT of ${l.name}`);
  },
});

const setShaderControl = defineTool({
  name: 'set_shader_control',
  description: 'Sets one shader control of a layer by name (for example a colour, a brightness, or `normalized` as {"range":[lo,hi]}).',
  parameters: {
    type: 'object',
    properties: { layer: LAYER, control: { type: 'string', minLength: 1, maxLength: 100 }, value: { type: ['number', 'string', 'boolean', 'object', 'array'] } },
    required: ['layer', 'control', 'value'],
    additionalProperties: false,
  },
  async run(ctx, a) {
    requireLayer(ctx, a.layer);
    const action = viewerBefore(ctx.doc, { type: 'set_shader_control', layer: a.layer, control: a.control, value: a.value });
    return actResult(await ctx.act('set_shader_control', action), `${String(a.control)} of ${String(a.layer)}`);
  },
});

const listVolumes = defineTool({
  name: 'list_volumes',
  description: 'Volumes this Plexus server serves (datasets and their layers), which add_layer can add.',
  parameters: { type: 'object', properties: {}, additionalProperties: false },
  async run(ctx) {
    const ds = await ctx.api.volumes(ctx.signal);
    return ok(`${ds.length} datasets`, ds.map((d) => ({ dataset: d.name, status: d.status ?? 'ready', layers: d.layers.map((l) => ({ name: l.name, type: (l.info as { type?: string } | undefined)?.type ?? 'image' })) })));
  },
});

const addLayerTool = defineTool({
  name: 'add_layer',
  description:
    'Adds a layer: either a volume of this server (dataset + volume_layer, see list_volumes), or an empty annotation layer (type "annotation"), or a source URL from the allowed hosts. Layers cannot point anywhere else.',
  parameters: {
    type: 'object',
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 100 },
      dataset: { type: 'string', maxLength: 200 },
      volume_layer: { type: 'string', maxLength: 200 },
      type: { type: 'string', enum: ['image', 'segmentation', 'annotation'] },
      source: { type: 'string', maxLength: 2000 },
    },
    required: ['name'],
    additionalProperties: false,
  },
  async run(ctx, a) {
    const name = a.name;
    if (layerNames(ctx.doc).includes(name)) throw new ToolRefusal(`a layer named "${name}" exists already`);
    let layer: NgLayer;
    if (a.dataset || a.volume_layer) {
      const ds = (await ctx.api.volumes(ctx.signal)).find((d) => d.name === a.dataset);
      const vl = ds?.layers.find((l) => l.name === a.volume_layer);
      if (!ds || !vl) throw new ToolRefusal(`no served volume ${String(a.dataset)}/${String(a.volume_layer)} (call list_volumes)`);
      layer = layerForServedVolume(ds.name, vl as unknown as ServedLayer, name);
    } else if (a.type === 'annotation' && !a.source) {
      layer = { type: 'annotation', name, source: 'local://annotations', annotations: [] } as NgLayer;
    } else {
      if (!a.source) throw new ToolRefusal('give dataset and volume_layer, or type "annotation", or a source');
      layer = { type: a.type ?? 'image', name, source: a.source } as NgLayer;
    }
    const why = refuseLayerSources(layer.source as Json, ctx.allowedSourcePrefixes);
    if (why) throw new ToolRefusal(why);
    ctx.presence.focus('viewer');
    return actResult(await ctx.act('add_layer', { type: 'add_layer', layer }), `add layer ${name}`);
  },
});

const removeLayerTool = defineTool({
  name: 'remove_layer',
  description: 'Removes a layer. Always becomes a proposal that a person must accept.',
  parameters: { type: 'object', properties: { layer: LAYER, why: { type: 'string', maxLength: 500 } }, required: ['layer'], additionalProperties: false },
  async run(ctx, a) {
    requireLayer(ctx, a.layer);
    return actResult(await ctx.act('remove_layer', { type: 'remove_layer', layer: a.layer }, a.why), `remove layer ${String(a.layer)}`);
  },
});

const POINT = {
  type: 'object',
  properties: { x: { type: 'number' }, y: { type: 'number' }, z: { type: 'number' }, description: { type: 'string', maxLength: 200 } },
  required: ['x', 'y'],
  additionalProperties: false,
} as const;

const addAnnotationsTool = defineTool({
  name: 'add_annotations',
  description:
    'Adds point annotations to an annotation layer (created if missing): given `points`, or taken from rows of an uploaded table (`from_table` with its position columns, detected when named x/y or centroid_x/centroid_y; optional SQL `where` filter). Coordinates are the viewer\'s.',
  parameters: {
    type: 'object',
    properties: {
      layer: LAYER,
      points: { type: 'array', items: POINT, maxItems: 5000 },
      from_table: {
        type: 'object',
        properties: {
          table: { type: 'string', maxLength: 63 },
          x_column: { type: 'string', maxLength: 100 },
          y_column: { type: 'string', maxLength: 100 },
          z_column: { type: 'string', maxLength: 100 },
          label_column: { type: 'string', maxLength: 100 },
          where: { type: 'string', maxLength: 1000, description: 'SQL condition on the table\'s columns' },
          limit: { type: 'integer', minimum: 1, maximum: 5000 },
        },
        required: ['table'],
        additionalProperties: false,
      },
    },
    required: ['layer'],
    additionalProperties: false,
  },
  async run(ctx, a) {
    const layerName = a.layer;
    const existing = readLayer(ctx.doc, layerName);
    if (existing && existing.type !== 'annotation') throw new ToolRefusal(`layer "${layerName}" is a ${String(existing.type)} layer, not an annotation layer`);
    const annotations: JsonObject[] = [];
    for (const p of a.points ?? []) {
      annotations.push({ type: 'point', id: `a${annotations.length}-${Date.now().toString(36)}`, point: p.z === undefined ? [p.x, p.y] : [p.x, p.y, p.z], ...(p.description ? { description: p.description } : {}) });
    }
    const ft = a.from_table;
    if (ft) {
      const table = getTable(ctx.doc, ft.table);
      if (!table) throw new ToolRefusal(`no table named "${ft.table}"`);
      const detected = roiColumns(table.columns);
      const cols = { x: ft.x_column ?? detected?.x, y: ft.y_column ?? detected?.y, z: ft.z_column ?? detected?.z, label: ft.label_column ?? detected?.label };
      if (!cols.x || !cols.y) throw new ToolRefusal(`could not find position columns in ${ft.table} (columns: ${table.columns.map((c) => c.name).join(', ')}); give x_column and y_column`);
      for (const c of [cols.x, cols.y, cols.z, cols.label]) if (c && !table.columns.some((tc) => tc.name === c)) throw new ToolRefusal(`table ${ft.table} has no column "${c}"`);
      const q = (s: string) => `"${s.replace(/"/g, '""')}"`;
      const sql = `SELECT * FROM ${q(ft.table)}${ft.where ? ` WHERE ${ft.where}` : ''}`;
      const res = await ctx.api.query(sql, ft.limit ?? 1000, ctx.signal);
      const rc = { x: cols.x, y: cols.y, ...(cols.z ? { z: cols.z } : {}), ...(cols.label ? { label: cols.label } : {}) };
      res.rows.forEach((row, i) => {
        const c = roiRowCentre(row, rc);
        if (!c) return;
        const point = c[2] === null ? [c[0]!, c[1]!] : [c[0]!, c[1]!, c[2]!];
        const label = rc.label ? row[rc.label] : undefined;
        annotations.push({ type: 'point', id: `${ft.table}-${i}-${Date.now().toString(36)}`, point: point as number[], ...(label !== undefined && label !== null ? { description: `${rc.label} ${String(label)}` } : {}) });
      });
    }
    if (annotations.length === 0) throw new ToolRefusal('no points to add (give points or from_table with matching rows)');
    if (!existing) {
      const created = await ctx.act('add_annotations', { type: 'add_layer', layer: { type: 'annotation', name: layerName, source: 'local://annotations', annotations: [] } as NgLayer });
      if (created.kind !== 'applied') return actResult(created, `annotation layer ${layerName}`);
    }
    ctx.presence.focus('viewer');
    return actResult(await ctx.act('add_annotations', { type: 'add_annotations', layer: layerName, annotations }), `${annotations.length} annotations`, { count: annotations.length });
  },
});

const saveView = defineTool({
  name: 'save_view',
  description: 'Saves the current shared view (camera, layout, per-layer display) as a named view everyone can load.',
  parameters: { type: 'object', properties: { name: { type: 'string', minLength: 1, maxLength: 100 } }, required: ['name'], additionalProperties: false },
  async run(ctx, a) {
    return actResult(await ctx.act('save_view', { type: 'save_view', name: a.name }), `save view ${String(a.name)}`);
  },
});

const exportLink = defineTool({
  name: 'export_link',
  description: 'A Neuroglancer link of the current shared view (on the workspace\'s Neuroglancer host), as a markdown link to paste in your answer.',
  parameters: { type: 'object', properties: {}, additionalProperties: false },
  async run(ctx) {
    const url = stateLink(readViewerState(ctx.doc), getSettings(ctx.doc).neuroglancerHost);
    return ok(`link (${url.length} chars)`, { markdown: maskedLink(url) });
  },
});

export const viewerTools: Tool[] = [getViewerState, setView, setLayer, setLut, setShaderControl, listVolumes, addLayerTool, removeLayerTool, addAnnotationsTool, saveView, exportLink];
