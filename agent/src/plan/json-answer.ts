/**
 * Structured answers from the model: one JSON object in its text (a ```json fence or surrounding
 * words tolerated), checked against a JSON schema with every problem named, so the caller can
 * ask once more with the problems. Pure module.
 */
import { validate, type FromSchema, type JsonSchema } from '../tools/validate.ts';

export class AnswerFormatError extends Error {}

/** The first balanced `{…}` of `text` (strings and escapes respected), or null. */
export function firstJsonObject(text: string): string | null {
  const start = text.indexOf('{');
  if (start < 0) return null;
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return text.slice(start, i + 1);
  }
  return null;
}

/** Parses and checks a structured answer; AnswerFormatError names what is wrong. */
export function parseAnswer<const S extends JsonSchema>(schema: S, text: string, what: string): FromSchema<S> {
  const raw = firstJsonObject(text);
  if (!raw) throw new AnswerFormatError(`the ${what} must be one JSON object; the answer had none`);
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (e) {
    throw new AnswerFormatError(`the ${what} is not valid JSON: ${(e as Error).message}`);
  }
  const problems = validate(schema, value, what);
  if (problems.length) throw new AnswerFormatError(problems.join('; '));
  return value as FromSchema<S>;
}
