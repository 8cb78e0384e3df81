/**
 * Every tool the agent offers the model, in one registry with scopes (seed 003): the model sees
 * only the tools of the scopes a request, or a plan step, needs — fewer tools, shorter prompts,
 * fewer wrong calls as tools multiply.
 */
import { TOOL_SCOPES, type ToolScope } from '@plexus/shared';
import type { Tool } from './tool.ts';
import { notebookTools } from './notebook-tools.ts';
import { viewerTools } from './viewer-tools.ts';
import { dataTools } from './data-tools.ts';
import { chatTools } from './chat-tools.ts';
import { analysisTools } from './analysis-tools.ts';
import { libraryTools } from './library-tools.ts';
import { atlasTools } from './atlas-tools.ts';

/** Each scope's tools. */
export const TOOLS_BY_SCOPE: Readonly<Record<ToolScope, Tool[]>> = {
  notebook: notebookTools,
  viewer: viewerTools,
  data: dataTools,
  calcium: analysisTools,
  atlas: atlasTools,
  chat: chatTools,
  library: libraryTools,
};

export const ALL_TOOLS: Tool[] = TOOL_SCOPES.flatMap((s) => TOOLS_BY_SCOPE[s]);
export const TOOLS_BY_NAME = new Map(ALL_TOOLS.map((t) => [t.name, t]));

/** The tools of `scopes` (all tools when none are given). Reading the notebook is always in scope. */
export function toolsFor(scopes?: readonly ToolScope[]): Tool[] {
  if (!scopes || scopes.length === 0) return ALL_TOOLS;
  const wanted = new Set<ToolScope>(scopes);
  const out = TOOL_SCOPES.filter((s) => wanted.has(s)).flatMap((s) => TOOLS_BY_SCOPE[s]);
  for (const name of ['get_notebook_state', 'get_cell']) if (!out.some((t) => t.name === name)) out.push(TOOLS_BY_NAME.get(name)!);
  return out;
}

/** The registry in short, for the planner: each scope and its tools' names and first sentences. */
export function toolCatalogue(): string {
  return TOOL_SCOPES.filter((s) => TOOLS_BY_SCOPE[s].length)
    .map((s) => `- ${s}: ${TOOLS_BY_SCOPE[s].map((t) => `${t.name} (${t.description.split(/(?<=\.)\s/)[0]!.slice(0, 120)})`).join('; ')}`)
    .join('\n');
}

/** The tools in the OpenAI `tools` format. */
export function openAiTools(tools: Tool[] = ALL_TOOLS) {
  return tools.map((t) => ({ type: 'function' as const, function: { name: t.name, description: t.description, parameters: t.parameters as Record<string, unknown> } }));
}
