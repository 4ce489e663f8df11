#!/usr/bin/env bash
# Builds GRUB's BIOS platform (i386-pc: kernel.img, the modules, the boot images) into
# $BUILD/grub/i386-pc/, the directory tools/nomvm/image.py gives grub-mkimage (-d), and that
# grub-mkimage into $BUILD/grub/bin/ (patch 0003 lets it leave the core image uncompressed).
#
# Source: Debian's grub2 source package (pinned in tools/deps/debian-sources.txt, fetched
# pristine into build/src/grub2 by tools/bootstrap.sh) with Debian's own patch series applied, so
# that the result is the installed grub-pc-bin plus our patches (tools/grub/patches/*.patch, in
# name order; README.md says what each saves). Compiled: grub-core and grub-mkimage; the other
# utilities (grub-mkrescue, grub-install) and xorriso stay Debian's.
#
# Skipped when the key (the source version, the configure flags and our patches) is the one
# already built; a finished build is also kept in $GRUB_CACHE/<key>/ (outside the checkout), so
# a fresh clone on the same machine copies it instead of compiling.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=${TOP:-$(cd "$here/../.." && pwd)}
build=${BUILD:-$top/build}
out=$build/grub
cache=${GRUB_CACHE:-/var/cache/nom-grub}
pristine=$build/src/grub2
jobs=${GRUB_JOBS:-2}

# Debian's flags for grub-pc (debian/rules: confflags, --with-platform=pc; on amd64 the target
# becomes i386 by itself), less those that only concern its utilities, which are not built here;
# -Werror off, so that a newer host compiler's new warning does not stop a third party's build.
CONFIGURE_FLAGS=(--with-platform=pc --disable-werror --disable-grub-emu-usb TARGET_CC=gcc)

die() { echo "grub: $*" >&2; exit 1; }
. "$top/tools/deps/debian_source.sh"

version=$(debian_source_version grub2 "$pristine")
require_commands autoreconf autopoint bison flex python3 patch cc

patches=("$here"/patches/*.patch)
[ -e "${patches[0]}" ] || patches=()
key=$( { echo "grub2 $version"; printf '%s\n' "${CONFIGURE_FLAGS[@]}"; } | build_key "${patches[@]}")

complete() {  # $1 holds a finished build: i386-pc/ and bin/grub-mkimage
  [ -f "$1/i386-pc/kernel.img" ] && [ -x "$1/bin/grub-mkimage" ]
}
if complete "$out" && [ "$(cat "$out/key" 2>/dev/null)" = "$key" ]; then
  echo "grub: $out is up to date ($key)"; exit 0
fi
mkdir -p "$out"
install_build() {  # $1: a finished build; replaces $out's i386-pc/ and bin/ whole
  local part
  for part in i386-pc bin; do
    rm -rf "$out/$part.new" && cp -a "$1/$part" "$out/$part.new" && rm -rf "$out/$part" &&
      mv "$out/$part.new" "$out/$part"
  done
  echo "$key" > "$out/key"
}
if complete "$cache/$key"; then
  install_build "$cache/$key"
  echo "grub: copied from the cache $cache/$key"; exit 0
fi

# The source tree: pristine + Debian's series + ours, made again whenever the key changes
# (autogen.sh regenerates the build files the patches touch; a minute).
src=$out/src
if [ "$(cat "$src/.key" 2>/dev/null)" != "$key" ]; then
  echo "grub: unpacking grub2 $version with Debian's patch series and ours into $src"
  rm -rf "$src" "$src.tmp" "$out/obj"
  copy_with_debian_series "$pristine" "$src.tmp"
  for p in "${patches[@]}"; do
    echo "grub: applying $(basename "$p")"
    apply_our_patch "$src.tmp" "$p" "grub2 $version"
  done
  echo "grub: autogen.sh (log: $src.tmp/autogen.log)"
  (cd "$src.tmp" && PYTHON=python3 ./autogen.sh) > "$src.tmp/autogen.log" 2>&1 ||
    { tail -20 "$src.tmp/autogen.log" >&2; die "autogen.sh failed (log: $src.tmp/autogen.log)"; }
  echo "$key" > "$src.tmp/.key"
  mv "$src.tmp" "$src"
fi

obj=$out/obj
if [ "$(cat "$obj/.key" 2>/dev/null)" != "$key" ]; then
  echo "grub: configuring (log: $obj/configure.log)"
  rm -rf "$obj"; mkdir -p "$obj"
  (cd "$obj" && "$src/configure" "${CONFIGURE_FLAGS[@]}") > "$obj/configure.log" 2>&1 ||
    { tail -30 "$obj/configure.log" >&2; die "configure failed (log: $obj/configure.log)"; }
  echo "$key" > "$obj/.key"
fi

echo "grub: compiling grub-core with $jobs jobs"
start=$(date +%s)
nice -n 10 make -s -C "$obj/grub-core" -j "$jobs" > "$obj/make.log" 2>&1 ||
  { tail -30 "$obj/make.log" >&2; die "the build failed in $obj/grub-core (log: $obj/make.log)"; }
# grub-mkimage links gnulib, which only the top-level `make all` would build first.
{ nice -n 10 make -s -C "$obj/grub-core/lib/gnulib" -j "$jobs" &&
  nice -n 10 make -s -C "$obj" -j "$jobs" grub-mkimage; } >> "$obj/make.log" 2>&1 ||
  { tail -30 "$obj/make.log" >&2; die "grub-mkimage's build failed in $obj (log: $obj/make.log)"; }
echo "grub: compiled in $(( $(date +%s) - start )) s"

# What Debian's grub-pc-bin installs into /usr/lib/grub/i386-pc: the images, modules and lists;
# beside it the grub-mkimage that knows our none_decompress.img.
stage=$(mktemp -d "$out/.stage-XXXXXX")
mkdir "$stage/i386-pc" "$stage/bin"
(cd "$obj/grub-core" && cp *.img *.mod *.lst modinfo.sh "$stage/i386-pc/") ||
  die "grub-core's build left no images or modules in $obj/grub-core"
cp "$obj/grub-mkimage" "$stage/bin/" || die "no grub-mkimage in $obj"
install_build "$stage"
# Into the cache whole or not at all: a temporary directory renamed to the key.
if mkdir -p "$cache" 2>/dev/null && mv -T "$stage" "$cache/.new-$key" 2>/dev/null &&
   mv -T "$cache/.new-$key" "$cache/$key" 2>/dev/null; then
  echo "grub: kept in the cache $cache/$key"
else
  rm -rf "$stage" "$cache/.new-$key"
fi
