/**
 * Scenario files for the scripted model: the turns it answers with, in order (a turn with a
 * `match` waits for a request whose last user message contains that text). Types and a checked
 * reader with clear errors. Pure apart from `loadScenario` (reads a file).
 */
import fs from 'node:fs';

/**
 * The kind of request, from the first line of its system prompt (`Task: route` …; none: the
 * conversational tool loop). A turn answers only requests of its `match.task` (none: only
 * conversational ones). Route and verify requests no turn answers get the defaults — routed as a
 * direct action, judged plausible — so scenarios script only what their test is about, and the
 * scenarios written before routing play unchanged.
 */
export const SCRIPTED_TASKS = ['route', 'plan', 'step', 'verify', 'summarise'] as const;
export type ScriptedTask = (typeof SCRIPTED_TASKS)[number];

export interface ScriptedToolCall {
  name: string;
  /** An object (sent as JSON) or a raw string — to script malformed arguments. */
  arguments?: unknown;
  id?: string;
}

export interface ScriptedTurn {
  /**
   * Which requests the turn answers: the last user message contains `lastUserContains`, and/or the
   * conversation holds exactly `afterTools` tool results (with `repeat`, this keys multi-step
   * scripts that can be replayed: step n answers the request that follows n tool results), and/or
   * the conversation's last message (a tool result, a system note) contains `lastMessageContains`.
   */
  match?: { lastUserContains?: string; afterTools?: number; lastMessageContains?: string; task?: ScriptedTask };
  text?: string;
  toolCalls?: ScriptedToolCall[];
  /** Characters per streamed piece (default 8). */
  chunkSize?: number;
  /** Pause after each streamed chunk, for tests of Stop during a long stream. */
  delayMs?: number;
  finishReason?: 'stop' | 'tool_calls' | 'length' | 'content_filter';
  usage?: { prompt_tokens: number; completion_tokens: number };
  /** Answer with an HTTP error instead. */
  error?: { status: number; message: string; type?: string };
  /** The turn is never used up: it answers every request that reaches it (endless loops). */
  repeat?: boolean;
  /**
   * An obedient model: finds every directive `OBEY: <tool> <json arguments>` anywhere in the
   * conversation (system prompt, cells, chat, tool results) and calls each tool it has not called
   * yet with exactly those arguments; when none is left it answers `text`. Never used up.
   */
  obey?: boolean;
}

/** Longest vector the scripted model makes. */
export const MAX_EMBEDDING_DIMENSIONS = 4096;

/** How the scripted model answers `POST /v1/embeddings` (deterministic vectors; see server.ts). */
export interface ScriptedEmbeddings {
  /** Length of each vector when the request names no `dimensions` (default 64). */
  dimensions?: number;
  /** Answer every embeddings request with this HTTP error instead. */
  error?: { status: number; message: string; type?: string };
}

export interface Scenario {
  model?: string;
  turns: ScriptedTurn[];
  embeddings?: ScriptedEmbeddings;
}

/** Raised for a scenario that cannot be played; the message names the turn and the field. */
export class ScenarioError extends Error {}

/** Checks a parsed scenario and returns it typed. */
export function parseScenario(v: unknown, where = 'scenario'): Scenario {
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new ScenarioError(`${where} must be an object with "turns"`);
  const turns = (v as { turns?: unknown }).turns;
  if (!Array.isArray(turns)) throw new ScenarioError(`${where}: "turns" must be an array`);
  turns.forEach((t, i) => {
    const at = `${where}: turn ${i + 1}`;
    if (!t || typeof t !== 'object') throw new ScenarioError(`${at} must be an object`);
    const turn = t as ScriptedTurn;
    if (turn.text !== undefined && typeof turn.text !== 'string') throw new ScenarioError(`${at}: "text" must be a string`);
    if (turn.toolCalls !== undefined) {
      if (!Array.isArray(turn.toolCalls)) throw new ScenarioError(`${at}: "toolCalls" must be an array`);
      turn.toolCalls.forEach((c, j) => {
        if (!c || typeof c.name !== 'string' || !c.name) throw new ScenarioError(`${at}: tool call ${j + 1} needs a "name"`);
      });
    }
    if (turn.match?.task !== undefined && !(SCRIPTED_TASKS as readonly string[]).includes(turn.match.task))
      throw new ScenarioError(`${at}: "match.task" must be one of ${SCRIPTED_TASKS.join(', ')}`);
    if (turn.error && (typeof turn.error.status !== 'number' || typeof turn.error.message !== 'string'))
      throw new ScenarioError(`${at}: "error" needs a numeric "status" and a "message"`);
    if (turn.text === undefined && !turn.toolCalls?.length && !turn.error && !turn.obey) throw new ScenarioError(`${at} has no text, tool calls or error`);
  });
  const e = (v as { embeddings?: ScriptedEmbeddings }).embeddings;
  if (e !== undefined) {
    if (!e || typeof e !== 'object') throw new ScenarioError(`${where}: "embeddings" must be an object`);
    if (e.dimensions !== undefined && !(Number.isInteger(e.dimensions) && e.dimensions >= 1 && e.dimensions <= MAX_EMBEDDING_DIMENSIONS))
      throw new ScenarioError(`${where}: "embeddings.dimensions" must be an integer from 1 to ${MAX_EMBEDDING_DIMENSIONS}`);
    if (e.error && (typeof e.error.status !== 'number' || typeof e.error.message !== 'string'))
      throw new ScenarioError(`${where}: "embeddings.error" needs a numeric "status" and a "message"`);
  }
  return v as Scenario;
}

/** Reads and checks a scenario file (JSON). */
export function loadScenario(file: string): Scenario {
  let v: unknown;
  try {
    v = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    throw new ScenarioError(`cannot read scenario ${file}: ${(e as Error).message}`);
  }
  return parseScenario(v, file);
}
