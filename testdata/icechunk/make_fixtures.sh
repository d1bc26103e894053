#!/usr/bin/env bash
# make_fixtures.sh -- regenerate the Icechunk fixtures in this directory: zarr-python (in the
# reference chroot) writes plain Zarr states and their values (make_states.py), then the
# official Icechunk core (node, wasm; installed by ../../../shared/tools/icechunk/setup.sh into
# ICECHUNK_JS, default /tmp/icechunk-js) commits them into repositories of spec 1 and 2
# (make_repos.mjs). Run from anywhere; needs root for the chroot.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
js=${ICECHUNK_JS:-/tmp/icechunk-js}
tmp=$(mktemp -d /tmp/icegen.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cd "$here"
../../../shared/tools/zarr-python make_states.py "$tmp/plain"
cp "$here/make_repos.mjs" "$js/make_repos.mjs"
node --no-warnings "$js/make_repos.mjs" "$tmp/plain/states" "$tmp/repos"
# virtual refs need the core's native build (node-native: the chroot's newer glibc)
cp "$here/make_virtual.mjs" "$js/make_virtual.mjs"
../../../shared/tools/icechunk/node-native --no-warnings "$js/make_virtual.mjs" "$tmp/repos"
rm -rf "$here/spec1" "$here/spec2" "$here/expected" "$here/virtual" "$here/virtual-data"
cp -r "$tmp/repos/virtual" "$tmp/repos/virtual-data" "$here/"
cp -r "$tmp/repos/spec1" "$tmp/repos/spec2" "$tmp/repos/expected.json" "$here/"
cp -r "$tmp/plain/expected" "$here/expected"
echo "fixtures in $here"
