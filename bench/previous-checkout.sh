#!/usr/bin/env bash
# A checkout of another revision of Plexus that runs on this checkout's installed packages, for
# benchmarks that compare two revisions side by side in one run (the `plexus-previous` server of
# bench/lib.ts: PLEXUS_PREVIOUS_DIR=DIR). The revision's own workspace packages (@plexus/*) are
# its own; every other package is this checkout's (so the two revisions must share package-lock.json).
#   bash bench/previous-checkout.sh REV DIR      e.g. bash bench/previous-checkout.sh HEAD~1 /tmp/plexus-prev
set -euo pipefail
rev=${1:?revision}
dir=${2:?directory}
root=$(cd "$(dirname "$0")/.." && pwd)
git -C "$root" rev-parse --verify --quiet "$rev^{commit}" >/dev/null || { echo "no such revision: $rev" >&2; exit 1; }
# The packages installed here are what the checkout runs on: its lock file must be this one.
if ! git -C "$root" diff --quiet "$rev" -- package-lock.json; then
  echo "package-lock.json differs between $rev and this checkout: install that revision on its own instead" >&2
  exit 1
fi
# Only a directory this script made (or none) is replaced.
if [ -e "$dir" ] && [ ! -e "$dir/.plexus-previous-checkout" ]; then
  echo "$dir exists and is not a checkout made by this script: choose another directory" >&2
  exit 1
fi
rm -rf "$dir"
mkdir -p "$dir"
touch "$dir/.plexus-previous-checkout"
git -C "$root" archive "$rev" | tar -x -C "$dir"
mkdir -p "$dir/node_modules"
for entry in "$root"/node_modules/* "$root"/node_modules/.bin; do
  name=$(basename "$entry")
  [ "$name" = "@plexus" ] && continue
  ln -s "$entry" "$dir/node_modules/$name"
done
cp -a "$root/node_modules/@plexus" "$dir/node_modules/@plexus" # relative links: to $dir's packages
for pkg in "$root"/*/node_modules; do
  ln -s "$pkg" "$dir/$(basename "$(dirname "$pkg")")/node_modules"
done
echo "$dir: $(git -C "$root" rev-parse --short "$rev")"
