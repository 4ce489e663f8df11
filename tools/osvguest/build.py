"""Builds the OSv comparison images (memcached, nginx, NPtcp) from an OSv tree into build/osv/.

    python3 tools/osvguest/build.py --osv-src PATH        # or OSV_SRC=PATH make osv
    python3 tools/osvguest/build.py --clone build/osv-src # clones OSv at PINNED_COMMIT first

Steps, each printed with the time since the start: install OSv's Debian build dependencies
(images.packages_needed; apt-get, so only when someone builds OSv, never in `make test`),
check the tree has its submodules, apply patches/*.patch to it (each once: a tree that has one
already keeps it; patches/README.md says why each exists), then per image write an OSv module into the tree's apps/
folder (module.py and a usr.manifest from OSv's own scripts/manifest_from_host.sh, which knows
what OSv's libc provides) and run OSv's `scripts/build fs=rofs image=nom-NAME` under nice, its
output in build/osv/logs/NAME.log and a line every 30 s with the files compiled so far. The
first image builds OSv's kernel (an hour of CPU); the others reuse it. The image is copied to
build/osv/NAME.qcow2, where tools/osvguest finds it by default, and build/osv/BUILD-INFO.json
records every input (commits, package versions, command lines) and the images' sha256.

fs=rofs: a read-only image written on the host (OSv's zfs image is filled by booting OSv,
minutes under TCG); /tmp is a ramfs. OSv's scripts import elftools and must run on Debian's
python3, so /usr/bin comes first on the build's PATH (a pyenv python3 lacks it).
"""
import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time

from osvguest import images

HERE = os.path.dirname(os.path.abspath(__file__))
TOOLS = os.path.dirname(HERE)

TOP = os.path.dirname(TOOLS)
BUILD = os.environ.get("BUILD", os.path.join(TOP, "build"))
OUT = os.path.join(BUILD, "osv")
NICE = 15
DEBIAN_PATH = "/usr/bin:/bin:/usr/sbin:/sbin"

# The OSv commit this builder was proved with, and the submodules its kernel needs (name in
# .gitmodules, path, GitHub repository). apps (osv-apps), the web GUI and OpenZFS are not
# needed: our modules use Debian's binaries, and conf_zfs defaults to the in-tree BSD ZFS.
OSV_REPO = "cloudius-systems/osv"
PINNED_COMMIT = "0e34e4dc2b278b7f64e4169abbf297b7de46fb6b"
SUBMODULES = (("external/x64/acpica", "external/x64/acpica", "cloudius-systems/acpica"),
              ("musl_1.2.1", "musl_1.2.1", "osvunikernel/musl"),
              # libc/ links seven files into the old musl (libc/locale/catopen.c and others):
              # without it make finds no rule for them.
              ("musl_0.9.12", "musl_0.9.12", "cloudius-systems/musl"),
              ("kbuild", "kbuild", "osvunikernel/kbuild-standalone"))
# A file in each that the build reads: an empty folder means `git submodule update` is missing.
TREE_PROBES = ("scripts/build", "scripts/manifest_from_host.sh", "loader.cc",
               "external/x64/acpica/source/include/acpi.h", "musl_1.2.1/src/string/memcpy.c",
               "kbuild/Makefile.osv", "musl_0.9.12/src/locale/catopen.c")
GITHUB_URL = "https://github.com/{repo}"


class BuildError(RuntimeError):
    """A step failed; the message says which and what to do."""


def repo_url(template, repo):
    """template with {repo} (owner/name), {owner} and {name} filled in."""
    owner, name = repo.split("/")
    return template.format(repo=repo, owner=owner, name=name)


def clone_commands(dest, url_template=GITHUB_URL, commit=PINNED_COMMIT):
    """The git commands that make an OSv tree at commit with SUBMODULES in dest."""
    git = ["git", "-C", dest]
    cmds = [["git", "clone", "--no-checkout", repo_url(url_template, OSV_REPO), dest],
            git + ["checkout", "-q", "--detach", commit],
            git + ["submodule", "init", *[path for _, path, _ in SUBMODULES]]]
    cmds += [git + ["config", f"submodule.{name}.url", repo_url(url_template, repo)]
             for name, _, repo in SUBMODULES]
    # protocol.file.allow: git refuses local submodule URLs (a mirror folder) by default.
    cmds.append(git + ["-c", "protocol.file.allow=always", "submodule", "update", "-q",
                       *[path for _, path, _ in SUBMODULES]])
    return cmds


PATCHES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "patches")


def patches():
    """The patch files applied to the OSv tree before it is built, in name order."""
    if not os.path.isdir(PATCHES):
        return []
    return sorted(os.path.join(PATCHES, n) for n in os.listdir(PATCHES) if n.endswith(".patch"))


def apply_patches(src, progress):
    """Applies each of patches() to the tree at src unless it is applied already (so a tree
    built before builds again); BuildError when one does neither."""
    for patch in patches():
        name = os.path.basename(patch)
        if _git_apply(src, "--check", "--reverse", patch):
            continue
        if not _git_apply(src, patch):
            raise BuildError(f"{name} does not apply to {src} (another OSv commit than "
                             f"{PINNED_COMMIT[:12]}?)")
        progress.say(f"applied {name}")


def _git_apply(src, *args):
    return subprocess.run(["git", "-C", src, "apply", *args], capture_output=True).returncode == 0


def missing_in_tree(src):
    """TREE_PROBES absent from the OSv tree src (empty when it can build)."""
    return [p for p in TREE_PROBES if not os.path.exists(os.path.join(src, p))]


def osv_build_command(image, jobs, nice=NICE):
    """OSv's build of image's module into a rofs image, run in the OSv tree."""
    return ["nice", "-n", str(nice), "./scripts/build", f"-j{jobs}", "fs=rofs",
            f"image={image.module}"]


def build_env(env=None):
    """The environment for OSv's scripts: Debian's python3 (with elftools) first on PATH."""
    env = dict(os.environ if env is None else env)
    env["PATH"] = DEBIAN_PATH + (":" + env["PATH"] if env.get("PATH") else "")
    env.pop("PYTHONPATH", None)
    return env


class Progress:
    """Prints "[MM:SS] step" lines, the time counted from the builder's start."""

    def __init__(self, out=None):
        self.start, self.out = time.monotonic(), out

    def elapsed(self):
        s = int(time.monotonic() - self.start)
        return f"{s // 60:02d}:{s % 60:02d}"

    def say(self, text):
        print(f"[{self.elapsed()}] {text}", file=self.out or sys.stdout, flush=True)


def dpkg_installed(package):
    r = subprocess.run(["dpkg-query", "-W", "-f", "${Status}", package],
                       capture_output=True, text=True)
    return r.returncode == 0 and r.stdout.endswith(" installed")


def install_packages(packages, progress):
    if not packages:
        progress.say("Debian packages: all present")
        return
    progress.say(f"apt-get install {' '.join(packages)}")
    r = subprocess.run(["apt-get", "install", "-y", "--no-install-recommends", *packages],
                       env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"),
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise BuildError(f"apt-get install failed ({r.returncode}):\n{r.stderr[-2000:]}")


def clone(dest, url_template, progress):
    for cmd in clone_commands(dest, url_template):
        progress.say(" ".join(cmd))
        if subprocess.run(cmd).returncode != 0:
            raise BuildError(f"{' '.join(cmd)} failed")


def make_command(image):
    """The make command that builds image's binary from its Makefile folder (make_dir)."""
    return ["make", "-C", image.make_dir, f"TOP={TOP}", f"BUILD={BUILD}"]


def make_binary(image, progress):
    """Builds image's binary with its Makefile (make_dir) when it has one (nom's NPtcp)."""
    if not image.make_dir:
        return
    cmd = make_command(image)
    progress.say(f"{image.name}: {' '.join(cmd)}")
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0 or not os.path.isfile(image.binary):
        raise BuildError(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stderr[-2000:]}")


def write_module(src, image):
    """Writes image's OSv module into src/apps/nom-NAME/; returns its folder."""
    module_dir = os.path.join(src, "apps", image.module)
    shutil.rmtree(module_dir, ignore_errors=True)
    for rel, text in images.module_files(image, module_dir).items():
        path = os.path.join(module_dir, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
    r = subprocess.run(["./scripts/manifest_from_host.sh", image.binary], cwd=src,
                       env=build_env(), capture_output=True, text=True)
    if r.returncode != 0 or f"{image.guest_binary}:" not in r.stdout:
        raise BuildError(f"manifest_from_host.sh {image.binary}: {r.stderr.strip()}")
    with open(os.path.join(module_dir, "usr.manifest"), "w") as f:
        f.write(r.stdout + "\n".join(images.manifest_extra(image, module_dir)) + "\n")
    return module_dir


def count_compiled(line):
    """1 if an OSv build output line reports one compiled file (its make prints "  CXX f")."""
    return 1 if line.lstrip().split(" ", 1)[0] in ("CC", "CXX", "AS") else 0


def failure_line(log_text):
    """OSv's scripts/build reports a failed step as "...build failed: COMMAND" but exits 0
    (its ERR trap runs `exit $?` after an echo), so its log is what says it failed."""
    return next((line for line in log_text.splitlines() if "/build failed: " in line), None)


def run_osv_build(src, image, jobs, log_path, progress, heartbeat_s=30.0):
    cmd = osv_build_command(image, jobs)
    progress.say(f"{image.name}: {' '.join(cmd)} (log {log_path})")
    compiled, last = 0, time.monotonic()
    with open(log_path, "w") as log:
        proc = subprocess.Popen(cmd, cwd=src, env=build_env(), stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, errors="replace")
        for line in proc.stdout:
            log.write(line)
            compiled += count_compiled(line)
            if time.monotonic() - last >= heartbeat_s:
                progress.say(f"{image.name}: {compiled} files compiled, last: {line.strip()[:60]}")
                last = time.monotonic()
        proc.wait()
    with open(log_path) as f:
        text = f.read()
    if proc.returncode != 0 or failure_line(text):
        raise BuildError(f"OSv's build of {image.name} failed ({proc.returncode}, "
                         f"{failure_line(text)}), log {log_path}:\n{text[-3000:]}")


def image_format(path):
    r = subprocess.run(["qemu-img", "info", "--output=json", path], capture_output=True,
                       text=True, check=True)
    return json.loads(r.stdout)["format"]


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def collect_image(src, image, out):
    """Copies OSv's build/release/usr.img to out/NAME.qcow2 (or .img if it is raw)."""
    built = os.path.join(src, "build", "release", "usr.img")
    suffix = ".qcow2" if image_format(built) == "qcow2" else ".img"
    dest = os.path.join(out, image.name + suffix)
    for old in (image.name + ".qcow2", image.name + ".img"):
        if os.path.exists(os.path.join(out, old)):
            os.remove(os.path.join(out, old))
    shutil.copyfile(built, dest)
    return dest


def git_head(path):
    r = subprocess.run(["git", "-C", path, "rev-parse", "HEAD"], capture_output=True, text=True)
    return r.stdout.strip() or None


def package_version(package):
    r = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", package],
                       capture_output=True, text=True)
    return r.stdout.strip() or None


def owning_package(path):
    """The Debian package that installed path (e.g. nginx or nginx-light), or None."""
    r = subprocess.run(["dpkg-query", "-S", path], capture_output=True, text=True)
    return r.stdout.split(":", 1)[0] if r.returncode == 0 else None


def _binary_version(image):
    """The Debian version of image's binary, or what builds it when it is ours."""
    package = owning_package(image.binary) or image.package
    if package:
        return package_version(package)
    return f"built by {os.path.relpath(image.make_dir, TOP)}/Makefile"


def build_info(src, built):
    """What BUILD-INFO.json records: the tree's commits, packages, per-image details. The
    top level describes this build; each image also names the OSv commit and patches it was
    built with, since an image kept from an earlier build (merge_build_info) may predate a
    patch: memcached's and nginx's images of 2026-11-27 18:50 did, under a top level that named
    the TIME_WAIT patch their netpipe neighbour was rebuilt for at 23:44."""
    tree = {"osv_commit": git_head(src),
            "patches": {os.path.basename(p): sha256(p) for p in patches()}}
    return {
        **tree,
        "submodules": {path: git_head(os.path.join(src, path)) for _, path, _ in SUBMODULES},
        "gcc": package_version("gcc-12") or package_version("gcc"),
        "packages": {p: package_version(p) for p in images.BUILD_PACKAGES},
        "images": {i.name: {"file": os.path.basename(path), "sha256": sha256(path),
                            "binary": i.binary, "package": owning_package(i.binary),
                            "version": _binary_version(i),
                            "cmdline": images.guest_cmdline(i), **tree}
                   for i, path in built},
    }


def merge_build_info(info, info_path):
    """Writes info to info_path, keeping the records of images an earlier build left there and
    this one did not rebuild (a record from before per-image trees says "patches": null:
    unknown)."""
    if os.path.exists(info_path):
        with open(info_path) as f:
            kept = json.load(f).get("images", {})
        for record in kept.values():
            record.setdefault("osv_commit", None)
            record.setdefault("patches", None)
        info["images"] = {**kept, **info["images"]}
    with open(info_path, "w") as f:
        json.dump(info, f, indent=1, sort_keys=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--osv-src", default=os.environ.get("OSV_SRC"),
                    help="OSv source tree with its submodules (also OSV_SRC)")
    ap.add_argument("--clone", metavar="DIR",
                    help=f"clone OSv at {PINNED_COMMIT[:12]} into DIR first and build it")
    ap.add_argument("--git-url", default=GITHUB_URL,
                    help="URL template of the repositories to clone, {repo} = owner/name")
    ap.add_argument("--images", default=",".join(images.IMAGES),
                    help="comma-separated images to build (default: all)")
    ap.add_argument("--out", default=OUT, help="where the images go (default build/osv)")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--no-install", action="store_true",
                    help="do not apt-get install missing packages; fail instead")
    args = ap.parse_args(argv)
    progress = Progress()
    try:
        chosen = [images.IMAGES[name] for name in args.images.split(",")]
    except KeyError as e:
        ap.error(f"unknown image {e}; known: {', '.join(images.IMAGES)}")
    src = args.clone or args.osv_src
    if not src:
        ap.error("no OSv tree: give --osv-src PATH (or OSV_SRC), or --clone DIR")
    src = os.path.abspath(src)  # the manifests name module files, read from OSv's build dir
    try:
        needed = images.packages_needed(chosen, dpkg_installed)
        if needed and args.no_install:
            raise BuildError(f"missing Debian packages: {' '.join(needed)}")
        install_packages(needed, progress)
        if args.clone and not os.path.exists(os.path.join(src, ".git")):
            clone(src, args.git_url, progress)
        missing = missing_in_tree(src)
        if missing:
            raise BuildError(f"{src} is not a complete OSv tree (missing {', '.join(missing)}); "
                             "run `git submodule update --init` for "
                             f"{', '.join(p for _, p, _ in SUBMODULES)} there")
        apply_patches(src, progress)
        logs = os.path.join(args.out, "logs")
        os.makedirs(logs, exist_ok=True)
        built = []
        for n, image in enumerate(chosen, 1):
            progress.say(f"image {n}/{len(chosen)}: {image.name} ({image.binary})")
            make_binary(image, progress)
            write_module(src, image)
            run_osv_build(src, image, args.jobs, os.path.join(logs, image.name + ".log"),
                          progress)
            built.append((image, collect_image(src, image, args.out)))
            progress.say(f"{image.name}: {built[-1][1]}")
        merge_build_info(build_info(src, built), os.path.join(args.out, "BUILD-INFO.json"))
        progress.say(f"done: {len(built)} images in {args.out}")
    except BuildError as e:
        progress.say(f"FAILED: {e}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
