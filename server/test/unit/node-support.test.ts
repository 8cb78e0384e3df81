/**
 * Which Node Plexus runs on, stated once and checked against the installed dependencies: the
 * oldest supported Node (package.json "engines") satisfies every package's declared engines except
 * the documented few that declare Node 22 (npm ci prints EBADENGINE for those; the README and the
 * install step explain it). A dependency update that raises the floor fails here until the
 * statement is updated.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import semver from 'semver';
import { describe, expect, it } from 'vitest';
import { MIN_NODE, NODE_22_DECLARED } from '../../../scripts/ensure-install.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(fs.readFileSync(path.join(root, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { engines?: { node?: string } | string[]; optional?: boolean }>;
};
const oldest = semver.minVersion(pkg.engines.node)!.version;

/** Installed packages (not optional platform builds) whose declared Node range excludes `version`. */
function excluding(version: string): string[] {
  const out = new Set<string>();
  for (const [where, p] of Object.entries(lock.packages)) {
    const range = p.engines && !Array.isArray(p.engines) ? p.engines.node : undefined;
    if (!where || !range || p.optional) continue;
    if (!semver.satisfies(version, range)) out.add(where.slice(where.lastIndexOf('node_modules/') + 'node_modules/'.length));
  }
  return [...out].sort();
}

describe('supported Node versions', () => {
  it('package.json, the install step and the README state the same oldest Node', () => {
    expect(oldest).toBe(`${MIN_NODE[0]}.${MIN_NODE[1]}.0`);
    const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
    expect(readme).toContain(`Node ${MIN_NODE[0]}.${MIN_NODE[1]}`);
    for (const name of NODE_22_DECLARED) expect(readme).toContain(`\`${name}\``);
  });

  it('the oldest supported Node satisfies every dependency except the documented Node 22 declarations', () => {
    expect(excluding(oldest)).toEqual([...NODE_22_DECLARED].sort());
  });

  it('Node 22 satisfies every dependency', () => {
    expect(excluding('22.12.0')).toEqual([]);
  });

  it('the Node running the tests is a supported one', () => {
    expect(semver.satisfies(process.versions.node, pkg.engines.node)).toBe(true);
  });
});
