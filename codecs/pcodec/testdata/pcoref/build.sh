#!/bin/sh
# Builds pcoref, a small command over the reference pcodec (Rust pco 1.0.3)
# that the tests use when PCOREF names it:
#   PCOREF=/tmp/pcoref/target/release/pcoref go test ./codecs/pcodec/
# Needs: cargo; the pcodec repository at $PCODEC_SRC (a git directory, e.g.
# the search tool's fetch of github:pcodec/pcodec); the Rust crates half and
# rand_xoshiro from Debian (apt-get install librust-half-dev
# librust-rand-xoshiro-dev, here inside the zarr-python chroot) at
# $CRATES (default /tmp/refenv/usr/share/cargo/registry). Builds in
# $OUT (default /tmp/pcoref), outside the project tree.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
PCODEC_SRC=${PCODEC_SRC:-/work/.mirror/pcodec+pcodec/repo}
CRATES=${CRATES:-/tmp/refenv/usr/share/cargo/registry}
OUT=${OUT:-/tmp/pcoref}
rm -rf "$OUT"
mkdir -p "$OUT/.cargo" "$OUT/pcoref/src"
git -C "$PCODEC_SRC" archive HEAD pco better_io dtype_dispatch | tar -x -C "$OUT"
# rand_core 0.10 (Debian's) names the trait RngCore as Rng; the generator is the same
sed -i 's/use rand_xoshiro::rand_core::{RngCore, SeedableRng};/use rand_xoshiro::rand_core::{Rng, SeedableRng};/' "$OUT/pco/src/sampling.rs"
cat > "$OUT/Cargo.toml" <<TOML
[workspace]
resolver = "2"
members = ["better_io", "dtype_dispatch", "pco", "pcoref"]
[workspace.dependencies]
better_io = { version = "0.2.0", path = "./better_io" }
dtype_dispatch = { version = "0.2.1", path = "./dtype_dispatch" }
half = "2.0.0"
rand_xoshiro = "0.8"
TOML
cat > "$OUT/.cargo/config.toml" <<TOML
[source.crates-io]
replace-with = "debian"
[source.debian]
directory = "$CRATES"
[net]
offline = true
TOML
cp "$here/Cargo.toml" "$OUT/pcoref/"
cp "$here/src/main.rs" "$OUT/pcoref/src/"
cd "$OUT" && PCO_DISMISS_BUILD_WARNINGS=1 cargo build --release -p pcoref
echo "$OUT/target/release/pcoref"
