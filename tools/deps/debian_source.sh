# Sourced (not run) by the scripts that compile a Debian source package with patches of ours
# (tools/grub/build.sh, tools/kvmcost/build.sh): the pinned version, the build's key and
# Debian's own patch series. The caller sets $top (the checkout) and defines die(), whose
# messages carry its own name.

# Prints the version of source package $1 pinned in tools/deps/debian-sources.txt, once sure
# that tools/bootstrap.sh fetched that version into $2.
debian_source_version() {
  local name=$1 pristine=$2 version
  version=$(awk -v name="$name" '$1 == name { print $2 }' "$top/tools/deps/debian-sources.txt")
  [ -n "$version" ] || die "no $name line in tools/deps/debian-sources.txt"
  [ -f "$pristine/.fetched-$version" ] && [ -f "$pristine/debian/patches/series" ] ||
    die "missing Debian source package $name $version in $pristine: run tools/bootstrap.sh (make bootstrap)"
  echo "$version"
}

# Dies naming the fix unless every command given is on the PATH.
require_commands() {
  local command
  for command; do
    command -v "$command" >/dev/null ||
      die "missing $command: run tools/bootstrap.sh (tools/deps/debian-packages.txt)"
  done
}

# Prints the 16-hex-digit key of a build: what the caller writes on stdin (the version, the
# flags), then each of our patches given, named and whole. A key names one cache entry, so
# the bytes hashed here must not change shape.
build_key() {
  local p
  { cat; for p; do echo "== $(basename "$p")"; cat "$p"; done; } | sha256sum | cut -c1-16
}

# Copies the pristine tree $1 to $2 and applies Debian's patch series there, in its order.
copy_with_debian_series() {
  local pristine=$1 dest=$2 p
  cp -a "$pristine" "$dest"
  grep -v '^\s*#' "$dest/debian/patches/series" | grep -v '^\s*$' | while read -r p; do
    patch -d "$dest" -p1 -s -f --no-backup-if-mismatch -r - < "$dest/debian/patches/$p" ||
      die "Debian patch $p does not apply to $pristine: re-run tools/bootstrap.sh"
  done
}

# Applies our patch $2 to the tree $1, which holds $3 (named in the message if it fails).
apply_our_patch() {
  patch -d "$1" -p1 -s -f --no-backup-if-mismatch -r - < "$2" ||
    die "${2#"$top"/} does not apply to $3: fix the patch"
}
