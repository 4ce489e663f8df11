#!/usr/bin/env bash
# Builds the exit-cost QEMU (tools/kvmcost/README.md) into $BUILD/kvmcost/qemu-system-x86_64.
#
# Source: Debian's qemu source package (pinned in tools/deps/debian-sources.txt, fetched pristine
# into build/src/qemu by tools/bootstrap.sh) with Debian's own patch series applied, so that the
# result is the installed qemu-system-x86 (7.2.22) plus our patches (tools/kvmcost/patches/*.patch,
# in name order). Only the x86_64-softmmu target with the devices of devices.mak.
#
# Skipped when the key (the source version, the configure flags, devices.mak and our patches)
# is the one already built; a finished build is also kept in $KVMCOST_CACHE/<key>/ (outside the
# checkout), so that a fresh clone on the same machine copies it instead of compiling.
# Rebuilds after a change of our patches are incremental (the old ones are reversed in place).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=${TOP:-$(cd "$here/../.." && pwd)}
build=${BUILD:-$top/build}
out=$build/kvmcost
cache=${KVMCOST_CACHE:-/var/cache/nom-kvmcost}
pristine=$build/src/qemu
jobs=${KVMCOST_JOBS:-2}

# --without-default-features turns off every optional library (gtk, vnc, curl, ...); the ones
# the guests need are turned back on: slirp (user networking), TCG plugins (tools/vmcounters),
# the "log" trace backend (tools/vmcounters/trace.py reads its lines). Tap is always built on Linux.
# Firmware (SeaBIOS, option ROMs) comes from the host's qemu-system-data, at Debian's path.
CONFIGURE_FLAGS=(
  --target-list=x86_64-softmmu
  --without-default-features --without-default-devices --with-devices-x86_64=nom-kvmcost
  --enable-tcg --disable-kvm --enable-fdt=system --enable-slirp --enable-plugins --enable-trace-backends=log
  --disable-docs --disable-tools --disable-debug-info --disable-werror
  --disable-install-blobs --firmwarepath=/usr/share/qemu:/usr/share/seabios:/usr/lib/ipxe/qemu
  --with-git-submodules=ignore
)

die() { echo "kvmcost: $*" >&2; exit 1; }
. "$top/tools/deps/debian_source.sh"

version=$(debian_source_version qemu "$pristine")
require_commands meson ninja pkg-config cc patch
for lib in glib-2.0 pixman-1 slirp; do
  pkg-config --exists "$lib" || die "missing $lib development files: run tools/bootstrap.sh (tools/deps/debian-packages.txt)"
done
[ -f /usr/include/libfdt.h ] || die "missing libfdt-dev: run tools/bootstrap.sh (tools/deps/debian-packages.txt)"

patches=("$here"/patches/*.patch)
[ -e "${patches[0]}" ] || patches=()
key=$( { echo "qemu $version"; printf '%s\n' "${CONFIGURE_FLAGS[@]}"; cat "$here/devices.mak"; } |
       build_key "${patches[@]}")

if [ -x "$out/qemu-system-x86_64" ] && [ "$(cat "$out/key" 2>/dev/null)" = "$key" ]; then
  echo "kvmcost: $out/qemu-system-x86_64 is up to date ($key)"; exit 0
fi
mkdir -p "$out"
if [ -x "$cache/$key/qemu-system-x86_64" ]; then
  cp "$cache/$key/qemu-system-x86_64" "$out/qemu-system-x86_64.new"
  mv "$out/qemu-system-x86_64.new" "$out/qemu-system-x86_64"
  echo "$key" > "$out/key"
  echo "kvmcost: copied from the cache $cache/$key"; exit 0
fi

# The source tree: pristine + Debian's series, redone only when the version changes.
src=$out/src
if [ "$(cat "$src/.debian-applied" 2>/dev/null)" != "$version" ]; then
  echo "kvmcost: unpacking qemu $version with Debian's patch series into $src"
  rm -rf "$src" "$out/obj"
  copy_with_debian_series "$pristine" "$src.tmp"
  cp "$here/devices.mak" "$src.tmp/configs/devices/x86_64-softmmu/nom-kvmcost.mak"
  mkdir "$src.tmp/.kvmcost-applied"
  echo "$version" > "$src.tmp/.debian-applied"
  mv "$src.tmp" "$src"
fi
cp "$here/devices.mak" "$src/configs/devices/x86_64-softmmu/nom-kvmcost.mak"

# Our patches: when they differ from the applied ones, reverse those (newest first), apply these.
applied=$src/.kvmcost-applied
if ! diff -rq "$applied" "$here/patches" >/dev/null 2>&1; then
  for p in $(ls -r "$applied"); do
    patch -d "$src" -p1 -s -f -R --no-backup-if-mismatch -r - < "$applied/$p" || die "cannot reverse $p in $src: rm -rf $src"
    rm "$applied/$p"
  done
  for p in "${patches[@]}"; do
    echo "kvmcost: applying $(basename "$p")"
    apply_our_patch "$src" "$p" "qemu $version"
    cp "$p" "$applied/"
  done
fi

obj=$out/obj
flags_key=$(printf '%s\n' "${CONFIGURE_FLAGS[@]}" | sha256sum | cut -c1-16)
if [ "$(cat "$obj/.configured" 2>/dev/null)" != "$flags_key" ]; then
  echo "kvmcost: configuring (log: $obj/configure.log)"
  rm -rf "$obj"; mkdir -p "$obj"
  (cd "$obj" && "$src/configure" --with-pkgversion="nom-kvmcost $key" "${CONFIGURE_FLAGS[@]}") \
    > "$obj/configure.log" 2>&1 || { tail -30 "$obj/configure.log" >&2;
      die "configure failed (log: $obj/configure.log); missing libraries: run tools/bootstrap.sh"; }
  echo "$flags_key" > "$obj/.configured"
fi

echo "kvmcost: compiling with $jobs jobs (ninja shows [done/total])"
start=$(date +%s)
nice -n 10 ninja -C "$obj" -j "$jobs" qemu-system-x86_64 ||
  die "the build failed in $obj (see the errors above)"
echo "kvmcost: compiled in $(( $(date +%s) - start )) s"
cp "$obj/qemu-system-x86_64" "$out/qemu-system-x86_64.new"
mv "$out/qemu-system-x86_64.new" "$out/qemu-system-x86_64"
echo "$key" > "$out/key"
# Into the cache whole or not at all: a temporary directory renamed to the key.
if mkdir -p "$cache" 2>/dev/null && tmp=$(mktemp -d "$cache/.new-XXXXXX") &&
   cp "$out/qemu-system-x86_64" "$tmp/" && chmod 755 "$tmp" && mv -T "$tmp" "$cache/$key" 2>/dev/null; then
  echo "kvmcost: kept in the cache $cache/$key"
else
  [ -n "${tmp:-}" ] && rm -rf "$tmp"
  [ -x "$cache/$key/qemu-system-x86_64" ] ||
    echo "kvmcost: warning: cannot write the cache $cache (a fresh clone will rebuild)" >&2
fi
