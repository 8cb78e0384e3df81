/**
 * Vite plugins that make the `neuroglancer` npm package (2.41) build under Vite 8. Build-time only.
 *
 * - Neuroglancer imports three `ikonate` icons that the registry release 1.1.1 (pinned through
 *   npm `overrides`, because Neuroglancer's GitHub dependency cannot be fetched offline) lacks;
 *   they are resolved to the closest existing icons.
 * - Neuroglancer writes `new Worker(/* webpackChunkName *\/ new URL(...))`. Vite only recognises
 *   a worker when `new URL` follows `new Worker(` directly; otherwise it silently inlines the
 *   worker as a data URL, which then cannot load its own chunks. The comment is stripped.
 */
import path from 'node:path';
import { createRequire } from 'node:module';
import type { Plugin } from 'vite';

const MISSING_ICONS: Record<string, string> = {
  'controls-alt.svg': 'controls.svg',
  'layers.svg': 'stack.svg',
  'code-alt.svg': 'file.svg',
};

/** Maps icons missing from ikonate 1.1.1 to existing ones. */
export function ikonateIcons(): Plugin {
  const require = createRequire(import.meta.url);
  let iconDir: string | undefined;
  return {
    name: 'plexus:ikonate-icons',
    enforce: 'pre',
    resolveId(source) {
      const m = /^ikonate\/icons\/([^?]+)(\?.*)?$/.exec(source);
      if (!m || !(m[1]! in MISSING_ICONS)) return null;
      iconDir ??= path.join(path.dirname(require.resolve('ikonate/package.json')), 'icons');
      return path.join(iconDir, MISSING_ICONS[m[1]!]!) + (m[2] ?? '');
    },
  };
}

/** Removes the webpack comment between `new Worker(` and `new URL(` in Neuroglancer's sources. */
export function neuroglancerWorkers(): Plugin {
  const pattern = /new Worker\(\s*\/\*\s*webpackChunkName:[^*]*\*\/\s*/g;
  return {
    name: 'plexus:neuroglancer-workers',
    enforce: 'pre',
    transform(code, id) {
      if (!id.includes('/neuroglancer/lib/') || !code.includes('webpackChunkName')) return null;
      return { code: code.replace(pattern, 'new Worker('), map: null };
    },
  };
}
