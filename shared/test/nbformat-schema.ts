/**
 * Validation against the official nbformat 4.5 JSON schema (fixtures/jupyter, BSD-3-Clause), for
 * the shared and server tests.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';

export const JUPYTER_FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'jupyter');

/** A fixture notebook (or the schema), parsed. */
export const readFixture = (f: string): any => JSON.parse(fs.readFileSync(path.join(JUPYTER_FIXTURES, f), 'utf8'));

const schema = readFixture('nbformat.v4.5.schema.json');
delete schema.$schema; // draft-04; the keywords it uses mean the same in Ajv's default draft
const compiled = new Ajv({ strict: false, allErrors: true }).compile(schema);

/** Schema errors of `nb` (empty when it is a valid nbformat 4.5 notebook). */
export function nbformatErrors(nb: unknown): string[] {
  return compiled(nb) ? [] : (compiled.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
}
