/** Every tool the agent offers the model, by name. */
import type { Tool } from './tool.ts';
import { notebookTools } from './notebook-tools.ts';
import { viewerTools } from './viewer-tools.ts';
import { dataTools } from './data-tools.ts';
import { chatTools } from './chat-tools.ts';
import { analysisTools } from './analysis-tools.ts';

export const ALL_TOOLS: Tool[] = [...notebookTools, ...viewerTools, ...dataTools, ...analysisTools, ...chatTools];
export const TOOLS_BY_NAME = new Map(ALL_TOOLS.map((t) => [t.name, t]));

/** The tools in the OpenAI `tools` format. */
export function openAiTools(tools: Tool[] = ALL_TOOLS) {
  return tools.map((t) => ({ type: 'function' as const, function: { name: t.name, description: t.description, parameters: t.parameters as Record<string, unknown> } }));
}
