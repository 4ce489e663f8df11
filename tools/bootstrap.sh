#!/usr/bin/env bash
# Installs and fetches everything nom's build, tests and `make run` need; idempotent.
# Inputs: tools/deps/debian-packages.txt, tools/deps/debian-sources.txt,
# tools/deps/linuxguest-debs.txt, tools/requirements.txt.
# Source packages are unpacked pristine (no Debian patches) into build/src/NAME; the Linux
# guest's binary packages are unpacked, not installed, into build/linuxguest/debs/NAME.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
deps=$top/tools/deps
src=$top/build/src
export DEBIAN_FRONTEND=noninteractive

list() { grep -v '^\s*#' "$1" | grep -v '^\s*$' || true; }

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

# deb-src entries, so `apt-get source` can fetch lwip, memcached, libevent, netpipe.
ensure_deb_src() {
  local f=/etc/apt/sources.list.d/nom-deb-src.sources
  [ -f "$f" ] && return 0
  echo "bootstrap: adding deb-src entries ($f)"
  as_root tee "$f" >/dev/null <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  as_root apt-get update -qq
}

install_packages() {
  local missing=()
  for p in $(list "$deps/debian-packages.txt"); do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} = 0 ] && return 0
  echo "bootstrap: installing ${missing[*]}"
  as_root apt-get update -qq
  as_root apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

fetch_sources() {
  mkdir -p "$src"
  list "$deps/debian-sources.txt" | while read -r name version; do
    local stamp=$src/$name/.fetched-$version
    [ -f "$stamp" ] && continue
    ensure_deb_src
    echo "bootstrap: fetching source package $name $version"
    local tmp; tmp=$(mktemp -d "$src/.fetch-XXXXXX")
    chmod 755 "$tmp"  # lets apt's sandbox user write there
    if ! (cd "$tmp" && apt-get source -qq --download-only "$name=$version" \
          && rm -rf "${src:?}/$name" \
          && dpkg-source --no-check -x --skip-patches ./*.dsc "$src/$name") >"$tmp.log" 2>&1; then
      cat "$tmp.log" >&2; echo "bootstrap: could not fetch source package $name $version" >&2; exit 1
    fi
    rm -rf "$tmp" "$tmp.log"
    rm -rf "$tmp"
    touch "$stamp"
  done
}

# The Linux guest's packages: downloaded and unpacked, never installed (a kernel package's
# postinst would write the host's /boot). A kernel's modules.dep is made by depmod -b, as its
# postinst would have.
fetch_guest_debs() {
  local debs=$top/build/linuxguest/debs
  mkdir -p "$debs"
  list "$deps/linuxguest-debs.txt" | while read -r name version; do
    # .version, written last, says the unpacked tree is complete and which version it is
    [ "$(cat "$debs/$name/.version" 2>/dev/null)" = "$version" ] && continue
    echo "bootstrap: fetching and unpacking $name $version (not installed)"
    local tmp; tmp=$(mktemp -d "$debs/.fetch-XXXXXX")
    chmod 755 "$tmp"  # lets apt's sandbox user write there
    if ! (cd "$tmp" && apt-get download -qq "$name=$version" && rm -rf "${debs:?}/$name" \
          && dpkg-deb -x ./*.deb "$debs/$name") >"$tmp.log" 2>&1; then
      cat "$tmp.log" >&2; echo "bootstrap: could not fetch $name $version" >&2; exit 1
    fi
    for release in "$debs/$name"/lib/modules/*; do
      [ -d "$release" ] && depmod -b "$debs/$name" "$(basename "$release")"
    done
    rm -rf "$tmp" "$tmp.log"
    echo "$version" > "$debs/$name/.version"
  done
}

install_python() {
  python3 - "$top/tools/requirements.txt" <<'PY' && return 0
import sys, importlib.metadata as md
for line in open(sys.argv[1]):
    line = line.split('#')[0].strip()
    if not line: continue
    name, version = line.split('==')
    try:
        if md.version(name) != version: sys.exit(1)
    except md.PackageNotFoundError:
        sys.exit(1)
PY
  echo "bootstrap: installing Python requirements"
  python3 -m pip install -q -r "$top/tools/requirements.txt"
}

# tools/ on every Python's import path, so the host tools import each other (`from nomvm
# import VM`) both under pytest and when run as `python3 tools/x/y.py`, with no sys.path edit
# in any of them: a .pth file in site-packages runs tools/nom_tools_site.py (installed beside
# it), which picks the checkout of the script being run, else of the current directory, else
# this one (its docstring says why).
install_tools_path() {
  local site pth line
  site=$(python3 -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
  pth=$site/nom-tools.pth
  line="import nom_tools_site; nom_tools_site.add('$top/tools')"
  if [ "$(cat "$pth" 2>/dev/null)" = "$line" ] &&
     cmp -s "$top/tools/nom_tools_site.py" "$site/nom_tools_site.py"; then
    return 0
  fi
  echo "bootstrap: tools/ on Python's path ($pth)"
  as_root cp "$top/tools/nom_tools_site.py" "$site/nom_tools_site.py"
  echo "$line" | as_root tee "$pth" >/dev/null
}

install_packages
fetch_sources
fetch_guest_debs
install_python
install_tools_path
