#!/usr/bin/env bash
# Builds the device kit: what a machine with no Node and no network needs to run the Node
# benchmarks from a copy of this repository's working tree (see scripts/device-bench.sh, which
# unpacks it there and runs them).
#
#   bash scripts/device-kit.sh            # writes .devkit/ (ignored through .git/info/exclude)
#
# Output, in .devkit/ (rerun to rebuild; about 42 MiB in all):
#   node.tar.xz    devnode/bin/node: this machine's `node` (DEVKIT_NODE to pick another), symbols
#                  stripped; devnode/lib/: its libstdc++ and libgcc_s, used only when the device's
#                  own are too old for the native addons (device-bench.sh decides).
#   native.tar.xz  the ELF files of the packages below (libduckdb.so, esbuild, better-sqlite3 ...),
#                  xz with the x86 branch filter.
#   js.tar.xz      the rest of those packages (JavaScript, package.json), plus the workspace links
#                  node_modules/@plexus/* (kept as relative symlinks into the working tree) and
#                  node_modules/typescript/package.json alone (tsx reads its version).
#   MANIFEST       sizes, sha256 sums, node version, the commit the kit was built at, and the
#                  folders the kit fills (device-bench.sh replaces exactly those); packages.txt.
#
# Which packages: the runtime dependency closure (dependencies + optionalDependencies present on
# disk, resolved the way Node does, nested node_modules included) of the workspaces that the
# server-side benchmarks load -- bench server shared testkit peer calcium agent (DEVKIT_WORKSPACES)
# -- plus tsx (DEVKIT_EXTRA). client, e2e and devDependencies are not followed, so Playwright,
# vite/rolldown, typescript, React, tiptap, neuroglancer, pdf-lib ... stay out. Within a package:
# no type declarations, source maps, Markdown, TypeScript sources, C/C++ sources, build
# intermediates (build/ keeps only build/Release/*.node), test/ or example/ folders.
# Checked with: keystroke-latency.ts (plexus, hocuspocus-sqlite, bare), kernel.ts, agent-typing.ts.
# Benchmarks that drive a browser (browser*.ts, Playwright) cannot run from this kit.
#
# Needs: node, GNU tar, xz; strip (optional). Builds take minutes (xz -9e on ~200 MB; 15 min on a
# loaded 2-core machine).
# Environment: DEVKIT_DIR (default .devkit), DEVKIT_NODE (default: node on PATH),
#   DEVKIT_WORKSPACES, DEVKIT_EXTRA, DEVKIT_SKIP (package names never followed), DEVKIT_XZ_THREADS
#   (default 0 = all cores; the output is the same size: every archive is one xz block).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KIT=${DEVKIT_DIR:-$ROOT/.devkit}
NODE_BIN=$(readlink -f "${DEVKIT_NODE:-$(command -v node)}")
THREADS=${DEVKIT_XZ_THREADS:-0}
export DEVKIT_WORKSPACES=${DEVKIT_WORKSPACES:-bench server shared testkit peer calcium agent}
export DEVKIT_EXTRA=${DEVKIT_EXTRA:-tsx}
export DEVKIT_SKIP=${DEVKIT_SKIP:-}

die() { echo "device-kit: $*" >&2; exit 1; }
[[ -x $NODE_BIN ]] || die "no node binary (set DEVKIT_NODE)"
command -v xz >/dev/null || die "xz not found"
tar --version 2>/dev/null | grep -q 'GNU tar' || die "GNU tar needed"
[[ -d $ROOT/node_modules ]] || die "no node_modules in $ROOT (npm ci first)"

WORK=$(mktemp -d /tmp/devkit-build.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$KIT"
rm -f "$KIT"/*.tar.xz "$KIT"/MANIFEST

# Adds .devkit to .git/info/exclude (ignored, so it never gets committed, but it can be carried).
if [[ $KIT == "$ROOT/.devkit" && -d $ROOT/.git ]]; then
  mkdir -p "$ROOT/.git/info"
  grep -qxF '/.devkit/' "$ROOT/.git/info/exclude" 2>/dev/null || echo '/.devkit/' >> "$ROOT/.git/info/exclude"
fi

tarc() { # tarc DIR LISTFILE: a reproducible tar of the listed paths (relative to DIR) on stdout
  tar -C "$1" --owner=0 --group=0 --numeric-owner --sort=name --mtime=@0 --no-recursion \
    --verbatim-files-from -T "$2" -cf -
}
XZ_NATIVE=(xz -T"$THREADS" --x86 --lzma2=preset=9e,dict=128MiB)
XZ_TEXT=(xz -T"$THREADS" -9e)

# ---- 1. the file lists: dependency closure, filtered ---------------------------------------
cat > "$WORK/list.mjs" <<'EOF'
import fs from 'node:fs';
import path from 'node:path';
const [root, work] = process.argv.slice(2);
const words = (s) => (s ?? '').split(/\s+/).filter(Boolean);
const WORKSPACES = words(process.env.DEVKIT_WORKSPACES);
const EXTRA = words(process.env.DEVKIT_EXTRA);
const SKIP = new Set(words(process.env.DEVKIT_SKIP));
const readPkg = (dir) => { try { return JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')); } catch { return null; } };
const resolveFrom = (dir, name) => {
  for (let d = dir; ; d = path.dirname(d)) {
    const c = path.join(d, 'node_modules', name);
    if (fs.existsSync(path.join(c, 'package.json'))) return c;
    if (d === root || d === path.dirname(d)) return null;
  }
};
const pkgs = new Set();
const seen = new Set();
const missing = [];
function visit(dir) {
  const real = fs.realpathSync(dir);
  if (seen.has(real)) return;
  seen.add(real);
  const pkg = readPkg(real) ?? {};
  const optional = pkg.optionalDependencies ?? {};
  for (const name of Object.keys({ ...pkg.dependencies, ...optional })) {
    if (SKIP.has(name) || name.startsWith('@types/')) continue;
    const at = resolveFrom(real, name);
    if (!at) { if (!(name in optional)) missing.push(`${name} (from ${path.relative(root, real) || '.'})`); continue; }
    if (!fs.lstatSync(at).isSymbolicLink()) pkgs.add(path.relative(root, at)); // workspace links are not copied
    visit(at);
  }
}
for (const w of WORKSPACES) visit(path.join(root, w));
for (const e of EXTRA) {
  const at = resolveFrom(root, e);
  if (!at) { missing.push(e); continue; }
  pkgs.add(path.relative(root, at));
  visit(at);
}
if (missing.length) console.error(`device-kit: not installed, left out: ${missing.join(', ')}`);

// Inside a package: what a run never reads.
const DROP_FILE = /(\.d\.[cm]?ts|\.d\.ts\.map|\.map|\.md|\.markdown|\.tsbuildinfo|\.flow|\.(c|cc|cpp|cxx|h|hh|hpp|gyp|gypi|mk|o|a|obj|lib|pdb|tlog)|(?<!\.d)\.[cm]?ts)$/i;
const DROP_DIR = new Set(['test', 'tests', '__tests__', 'example', 'examples', '.github', 'node_modules']);
const isElf = (f) => { const fd = fs.openSync(f, 'r'); const b = Buffer.alloc(4); fs.readSync(fd, b, 0, 4, 0); fs.closeSync(fd); return b.equals(Buffer.from([0x7f, 0x45, 0x4c, 0x46])); };
const native = [];
const text = [];
let dropped = 0;
function walk(rel, pkgRoot, hasGyp) {
  for (const ent of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
    const r = path.join(rel, ent.name);
    const inPkg = path.relative(pkgRoot, r);
    if (ent.isDirectory()) {
      if (DROP_DIR.has(ent.name)) continue; // nested node_modules are packages of their own (listed if needed)
      if (hasGyp && (inPkg === 'deps' || inPkg === 'src')) continue; // sources of a native addon
      if (hasGyp && inPkg.startsWith('build/') && inPkg !== 'build/Release') continue;
      walk(r, pkgRoot, hasGyp);
    } else if (ent.isSymbolicLink()) {
      text.push(r);
    } else if (ent.isFile()) {
      const size = fs.statSync(path.join(root, r)).size;
      if (hasGyp && inPkg.startsWith('build/') && !/^build\/Release\/[^/]+\.node$/.test(inPkg)) { dropped += size; continue; }
      if (/test_extension\.node$/.test(r) || (DROP_FILE.test(ent.name) && ent.name !== 'package.json')) { dropped += size; continue; }
      (isElf(path.join(root, r)) ? native : text).push(r);
    }
  }
}
for (const p of [...pkgs].sort()) walk(p, p, fs.existsSync(path.join(root, p, 'binding.gyp')));
// Workspace links (node_modules/@plexus/*): relative symlinks into the working tree.
for (const d of [path.join('node_modules', '@plexus')]) {
  if (!fs.existsSync(path.join(root, d))) continue;
  for (const ent of fs.readdirSync(path.join(root, d), { withFileTypes: true })) if (ent.isSymbolicLink()) text.push(path.join(d, ent.name));
}
// tsx reads typescript's package.json (its version) when there is one: keep that file alone.
if (fs.existsSync(path.join(root, 'node_modules/typescript/package.json'))) text.push('node_modules/typescript/package.json');
fs.writeFileSync(path.join(work, 'native.list'), native.join('\n') + '\n');
fs.writeFileSync(path.join(work, 'text.list'), text.join('\n') + '\n');
fs.writeFileSync(path.join(work, 'packages.list'), [...pkgs].sort().join('\n') + '\n');
// The top-level folders the kit fills (device-bench.sh replaces exactly these).
const tops = new Set([...native, ...text].map((f) => f.slice(0, f.indexOf('node_modules') + 'node_modules'.length)));
fs.writeFileSync(path.join(work, 'tops.list'), [...tops].sort().join('\n') + '\n');
console.error(`device-kit: ${pkgs.size} packages, ${native.length} native + ${text.length} other files; left out inside them: ${(dropped / 1048576).toFixed(1)} MiB`);
EOF
"$NODE_BIN" "$WORK/list.mjs" "$ROOT" "$WORK"

# ---- 2. node --------------------------------------------------------------------------------
mkdir -p "$WORK/node/devnode/bin" "$WORK/node/devnode/lib"
cp "$NODE_BIN" "$WORK/node/devnode/bin/node"
if command -v strip >/dev/null; then
  strip --strip-all "$WORK/node/devnode/bin/node" # .symtab and debug info only: .dynsym (N-API) stays
fi
chmod 755 "$WORK/node/devnode" "$WORK/node/devnode/bin" "$WORK/node/devnode/bin/node"
"$WORK/node/devnode/bin/node" -e 'process.exit(0)' || die "the stripped node does not run"
# Fallback C++ runtime (libstdc++/libgcc_s of this machine, as the addons were built against them).
for lib in $(cd "$ROOT" && xargs -d '\n' ldd "$NODE_BIN" < "$WORK/native.list" 2>/dev/null | awk '/libstdc\+\+|libgcc_s/ {print $3}' | sort -u); do
  cp -L "$lib" "$WORK/node/devnode/lib/"
done
(cd "$WORK/node" && find devnode | sort) > "$WORK/node.list"

# ---- 3. archives ------------------------------------------------------------------------------
echo "device-kit: compressing (xz -9e; a few minutes) ..." >&2
tarc "$WORK/node" "$WORK/node.list" | "${XZ_NATIVE[@]}" > "$KIT/node.tar.xz" &
p1=$!
tarc "$ROOT" "$WORK/native.list" | "${XZ_NATIVE[@]}" > "$KIT/native.tar.xz" &
p2=$!
tarc "$ROOT" "$WORK/text.list" | "${XZ_TEXT[@]}" > "$KIT/js.tar.xz" &
p3=$!
wait $p1 && wait $p2 && wait $p3 || die "tar/xz failed"

# ---- 4. manifest ------------------------------------------------------------------------------
{
  echo "built $(date -u +%FT%TZ) on $(uname -srm)"
  echo "commit $(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo '?')$(git -C "$ROOT" diff --quiet HEAD 2>/dev/null || echo ' (working tree had changes)')"
  echo "node $("$NODE_BIN" -v) from $NODE_BIN"
  echo "tops $(tr '\n' ' ' < "$WORK/tops.list")"
  echo "packages $(wc -l < "$WORK/packages.list")"
  (cd "$KIT" && for f in node.tar.xz native.tar.xz js.tar.xz; do echo "sha256 $(sha256sum "$f")"; done)
  (cd "$KIT" && du -b node.tar.xz native.tar.xz js.tar.xz | sed 's/^/bytes /')
} > "$KIT/MANIFEST"
cp "$WORK/packages.list" "$KIT/packages.txt"
cat "$KIT/MANIFEST" >&2
echo "device-kit: $(du -sh "$KIT" | cut -f1) in $KIT" >&2
