/**
 * Neuroglancer state links: parse a state from a URL (state in the fragment after `#!`), from
 * JSON text, and build a link for a Neuroglancer host. Links are masked in chat, as long state
 * URLs are unreadable. Pure module.
 */
import { DEFAULT_SETTINGS } from '../schema.ts';
import { isJsonObject } from '../json.ts';
import type { NgState } from './state-doc.ts';

/** The public Neuroglancer host used when a workspace sets none. */
export const DEFAULT_NEUROGLANCER_HOST = DEFAULT_SETTINGS.neuroglancerHost;

export type ParsedState =
  | { kind: 'state'; state: NgState }
  /** The fragment names a JSON file elsewhere (`#!gs://…` or `#!https://…/state.json`). */
  | { kind: 'remote'; url: string };

/** Raised for text that holds no usable Neuroglancer state; the message says what is wrong. */
export class StateParseError extends Error {}

function parseJsonState(text: string, what: string): NgState {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new StateParseError(`${what} is not valid JSON: ${(e as Error).message}`);
  }
  if (!isJsonObject(v)) throw new StateParseError(`${what} must be a JSON object (a Neuroglancer state), got ${Array.isArray(v) ? 'an array' : typeof v}`);
  return v;
}

/**
 * Reads a Neuroglancer state from what a person pasted or dropped: a link (`https://host/#!{…}`,
 * URL-encoded or not), a bare fragment (`#!{…}`), or JSON text.
 */
export function parseStateInput(input: string): ParsedState {
  const text = input.trim();
  if (!text) throw new StateParseError('nothing to import: paste a Neuroglancer link or state JSON');
  if (text.startsWith('{')) return { kind: 'state', state: parseJsonState(text, 'the state') };
  const hash = text.indexOf('#');
  if (hash < 0) throw new StateParseError('this is neither state JSON nor a Neuroglancer link (a link has the state after "#!")');
  let fragment = text.slice(hash + 1);
  if (fragment.startsWith('!')) fragment = fragment.slice(1);
  // Unencoded JSON (copied from an address bar) is read as it is: decoding it would turn a `%41`
  // inside a string into another character.
  const plain = fragment.trim();
  if (plain.startsWith('{')) {
    try {
      return { kind: 'state', state: parseJsonState(plain, 'the state in the link') };
    } catch {
      // partly encoded (`{%22layers%22…`): decode below
    }
  }
  let decoded: string;
  try {
    decoded = decodeURIComponent(fragment);
  } catch {
    decoded = fragment;
  }
  decoded = decoded.trim();
  if (!decoded) throw new StateParseError('the link carries no state after "#!"');
  if (decoded.startsWith('{')) return { kind: 'state', state: parseJsonState(decoded, 'the state in the link') };
  if (/^(https?|gs|s3):\/\//.test(decoded)) return { kind: 'remote', url: decoded };
  throw new StateParseError('the link carries no state after "#!"');
}

/** Neuroglancer's own fragment encoding: readable, but safe in any URL. */
export function encodeFragment(json: string): string {
  return encodeURI(json).replace(/[!'()*;,#?]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0'));
}

/** A link that opens `state` on a Neuroglancer host. */
export function stateLink(state: NgState, host: string = DEFAULT_NEUROGLANCER_HOST): string {
  const base = host.split('#')[0]!;
  return `${base}#!${encodeFragment(JSON.stringify(state))}`;
}

/** A short markdown form of a link for chat: `[Neuroglancer: 3 layers @ host](url)`. */
export function maskedLink(url: string, label?: string): string {
  let host = 'link';
  try {
    host = new URL(url).host;
  } catch {
    /* keep "link" */
  }
  return `[${label ?? 'Neuroglancer view'} (${host})](${url})`;
}

export type TextSegment =
  | { kind: 'text'; text: string }
  /** A link; `neuroglancer` when it carries a Neuroglancer state (shown masked). */
  | { kind: 'link'; url: string; label: string; neuroglancer: boolean };

/** True for URLs whose fragment carries a Neuroglancer state (`#!{…}`, encoded or not, or `#!gs://…`). */
export function isStateLink(url: string): boolean {
  const i = url.indexOf('#!');
  if (i < 0) return false;
  const rest = url.slice(i + 2);
  return /^(\{|%7B|https?:|gs:|s3:)/i.test(rest);
}

function hostOf(url: string): string {
  try {
    return new URL(url).host || 'link';
  } catch {
    return 'link';
  }
}

/**
 * End (exclusive) of the JSON object or array starting at `text[start]`, found by balancing
 * brackets outside strings; -1 when it does not close on the same line. Lets a state link pasted
 * with its JSON unencoded (`https://host/#!{"layers":[…]}`, as copied from an address bar) be
 * taken whole, quotes, spaces and parentheses inside strings included.
 */
export function jsonEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (c === '\n' || c === '\r') return -1;
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) return i + 1;
      if (depth < 0) return -1;
    }
  }
  return -1;
}

/**
 * Splits chat text into plain text and links — markdown `[label](url)` and bare http(s) URLs —
 * so that Neuroglancer state links, which run to thousands of characters, can be shown masked.
 * A state link whose JSON is not URL-encoded is taken up to the end of its JSON.
 */
export function splitLinks(text: string): TextSegment[] {
  const out: TextSegment[] = [];
  const re = /\[([^\]\n]{1,200})\]\((https?:\/\/[^\s)]+)\)|(https?:\/\/[^\s<>"']+)/g;
  let last = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    let start = m.index;
    let end = m.index + m[0].length;
    let url = m[2] ?? m[3]!;
    let label: string | undefined = m[1];
    const urlStart = m.index + m[0].indexOf(url);
    const raw = url.indexOf('#!{');
    const jsonAt = raw < 0 ? -1 : urlStart + raw + 2;
    const close = jsonAt < 0 ? -1 : jsonEnd(text, jsonAt);
    if (close > 0) {
      // Unencoded state JSON: the link runs to the end of the JSON (and its markdown `)`).
      url = text.slice(urlStart, close);
      end = close;
      const md = m[2] ? null : /\[([^\]\n]{1,200})\]\($/.exec(text.slice(last, m.index));
      if (m[2] || md) {
        if (text[close] === ')') {
          end = close + 1;
          if (md) {
            label = md[1];
            start = last + md.index;
          }
        } else if (m[2]) {
          // `[label](` without its `)`: show the link bare, the bracket text stays text.
          label = undefined;
          start = urlStart;
        }
      }
      re.lastIndex = end;
    }
    if (start > last) out.push({ kind: 'text', text: text.slice(last, start) });
    let trailing = '';
    // A bare URL at the end of a sentence: the final punctuation is not part of it.
    if (label === undefined && close < 0) {
      const t = /[.,;:!?)]+$/.exec(url);
      if (t && !isStateLink(url)) {
        trailing = t[0];
        url = url.slice(0, -trailing.length);
      }
    }
    const ng = isStateLink(url);
    out.push({ kind: 'link', url, neuroglancer: ng, label: label ?? (ng ? `Neuroglancer view (${hostOf(url)})` : url) });
    if (trailing) out.push({ kind: 'text', text: trailing });
    last = end;
  }
  if (last < text.length) out.push({ kind: 'text', text: text.slice(last) });
  return out;
}
