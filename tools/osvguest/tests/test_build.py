"""Does the OSv builder write modules, manifests and commands that make the images the
comparison needs, and select the right Debian packages? (Pure parts: no OSv build runs here.)"""
import json
import os
import shlex
import subprocess

import pytest

import netlab
from loadgen import apps
from osvguest import build, images

pytestmark = pytest.mark.unit


def test_the_three_images_fill_the_experiments_three_osv_slots():
    import osvguest
    assert {i.app for i in images.IMAGES.values()} == set(osvguest.APPS)
    for image in images.IMAGES.values():  # osvguest.find_image looks for these names
        assert image.name in osvguest.IMAGE_NAMES[image.app]


def test_cmdline_sets_the_static_address_then_runs_the_binary_as_the_linux_guest_does():
    words = shlex.split(images.guest_cmdline(images.IMAGES["memcached"]))
    assert words[0] == f"--ip=eth0,{netlab.GUEST_IP},255.255.255.0"
    assert words[1] == "/memcached"
    assert words[words.index("-p") + 1] == str(apps.MEMCACHED_PORT)
    assert words[words.index("-t") + 1] == "1"  # one worker thread for the one vCPU



def test_netpipe_image_repeats_both_receivers_quietly_with_the_transmitters_options():
    image = images.IMAGES["netpipe"]
    words = shlex.split(images.guest_cmdline(image))
    assert words[1] == "/NPtcp" and {"--repeat", "--quiet"} <= set(words)
    sets = " ".join(words[2:]).replace("--repeat ", "").replace("--quiet ", "").split(" --and ")
    assert sets == [" ".join(apps.NETPIPE_PINGPONG_ARGS), " ".join(apps.NETPIPE_BIDIR_ARGS)]
    # ours, built by its Makefile: no Debian package to install for it
    assert image.package is None and os.path.isfile(os.path.join(image.make_dir, "Makefile"))


def test_module_py_runs_the_cmdline_and_is_valid_python():
    image = images.IMAGES["nginx"]
    text = images.module_py(image, guest_ip="10.0.0.9")
    compile(text, "module.py", "exec")
    assert repr(images.guest_cmdline(image, "10.0.0.9")) in text
    assert "/nginx -c /etc/nginx/nginx.conf" in text


def test_nginx_image_serves_the_linux_guests_page_on_the_http_port(tmp_path):
    image = images.IMAGES["nginx"]
    lines = images.manifest_extra(image, str(tmp_path))
    assert f"/srv/www/index.html: {images.INDEX_HTML}" in lines
    assert os.path.getsize(images.INDEX_HTML) == apps.INDEX_BYTES
    conf = images.module_files(image, str(tmp_path))["files/etc/nginx/nginx.conf"]
    assert f"listen {apps.HTTP_PORT} default_server;" in conf and "root /srv/www;" in conf
    assert "master_process off;" in conf and "daemon off;" in conf
    # the text file goes where its manifest line says
    assert f"/etc/nginx/nginx.conf: {tmp_path}/files/etc/nginx/nginx.conf" in lines
    assert "/var/log/nginx: ->/tmp" in lines


def test_packages_are_the_missing_ones_only():
    all_images = list(images.IMAGES.values())
    none_installed = images.packages_needed(all_images, installed=lambda p: False,
                                            exists=lambda path: False)
    assert "python3-pyelftools" in none_installed and "genromfs" in none_installed
    assert {"memcached", "nginx-light"} <= set(none_installed) and None not in none_installed
    assert len(none_installed) == len(set(none_installed))
    # a binary already there (e.g. nginx from Debian's "nginx") needs no package of its own
    have_binaries = images.packages_needed(all_images, installed=lambda p: False,
                                           exists=lambda path: True)
    assert "nginx-light" not in have_binaries
    assert images.packages_needed(all_images, installed=lambda p: True) == []


def test_clone_pins_osv_and_points_each_submodule_at_the_url_template():
    cmds = build.clone_commands("/t/osv", "/mirror/{owner}+{name}/repo")
    assert cmds[0] == ["git", "clone", "--no-checkout", "/mirror/cloudius-systems+osv/repo",
                       "/t/osv"]
    assert ["git", "-C", "/t/osv", "checkout", "-q", "--detach", build.PINNED_COMMIT] in cmds
    assert ["git", "-C", "/t/osv", "config", "submodule.musl_1.2.1.url",
            "/mirror/osvunikernel+musl/repo"] in cmds
    assert cmds[-1][-len(build.SUBMODULES):] == [p for _, p, _ in build.SUBMODULES]
    assert build.clone_commands("d")[0][3] == "https://github.com/cloudius-systems/osv"


def test_tree_check_names_what_is_missing(tmp_path):
    assert "musl_1.2.1/src/string/memcpy.c" in build.missing_in_tree(str(tmp_path))
    for probe in build.TREE_PROBES:
        (tmp_path / probe).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / probe).write_text("")
    assert build.missing_in_tree(str(tmp_path)) == []


def test_osv_build_runs_niced_rofs_with_our_module_and_debians_python_first():
    cmd = build.osv_build_command(images.IMAGES["memcached"], jobs=2)
    assert cmd == ["nice", "-n", "15", "./scripts/build", "-j2", "fs=rofs",
                   "image=nom-memcached"]
    env = build.build_env({"PATH": "/root/.pyenv/shims:/usr/bin", "PYTHONPATH": "/x"})
    assert env["PATH"].startswith("/usr/bin:") and "PYTHONPATH" not in env


def test_progress_counts_compiled_files_from_osvs_make_output():
    assert build.count_compiled("  CXX core/mmu.cc\n") == 1
    assert build.count_compiled("  CC musl/src/string/memcpy.c\n") == 1
    assert build.count_compiled("  LINK loader.elf\n") == 0


def test_a_failed_step_is_found_in_the_log_though_osvs_build_exits_0():
    log = ("Adding /etc/fstab\nFileNotFoundError: ...\n./scripts/build failed: "
           '"$SRC"/scripts/gen-rofs-img.py -o rofs.img -m usr.manifest\n')
    assert build.failure_line(log).startswith("./scripts/build failed: ")
    assert build.failure_line("Writing image\nInodes count 19\n") is None


def test_builder_refuses_a_tree_without_submodules(tmp_path, capsys):
    rc = build.main(["--osv-src", str(tmp_path), "--no-install", "--images", "netpipe",
                     "--out", str(tmp_path / "out")])
    out = capsys.readouterr().out
    assert rc == 1 and "FAILED" in out
    assert ("not a complete OSv tree" in out) or ("missing Debian packages" in out)


def test_unknown_image_is_a_usage_error():
    with pytest.raises(SystemExit):
        build.main(["--osv-src", "/nonexistent", "--images", "lighttpd"])


def test_patches_apply_once_and_a_patched_tree_keeps_them(tmp_path, monkeypatch):
    """build.apply_patches: each patches/*.patch goes into the tree once; a second build of the
    same tree applies nothing; a tree it does not fit stops the build naming the patch."""
    import subprocess
    src, patches = tmp_path / "osv", tmp_path / "patches"
    src.mkdir(), patches.mkdir()
    subprocess.run(["git", "init", "-q", str(src)], check=True)
    (src / "tcp.cc").write_text("a\nb\nc\n")
    (patches / "one.patch").write_text(
        "--- a/tcp.cc\n+++ b/tcp.cc\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n")
    monkeypatch.setattr(build, "PATCHES", str(patches))
    said = []
    progress = type("P", (), {"say": lambda self, text: said.append(text)})()
    build.apply_patches(str(src), progress)
    assert (src / "tcp.cc").read_text() == "a\nB\nc\n" and said == ["applied one.patch"]
    build.apply_patches(str(src), progress)  # the same tree built again
    assert (src / "tcp.cc").read_text() == "a\nB\nc\n" and len(said) == 1
    (src / "tcp.cc").write_text("x\ny\nz\n")
    with pytest.raises(build.BuildError, match="one.patch does not apply"):
        build.apply_patches(str(src), progress)


def test_every_patch_is_named_in_the_patches_readme():
    names = [os.path.basename(p) for p in build.patches()]
    readme = open(os.path.join(build.PATCHES, "README.md")).read()
    assert names and all(f"`{n}`" in readme for n in names)


def test_an_image_kept_from_an_earlier_build_keeps_its_own_tree_not_the_new_builds(tmp_path):
    """build.merge_build_info: a rebuilt image records the tree and patches it was built with;
    an image the build did not rebuild keeps its record, and one from before per-image trees
    says its patches are unknown rather than inheriting the new build's."""
    path = tmp_path / "BUILD-INFO.json"
    path.write_text(json.dumps({"patches": {}, "images": {
        "memcached": {"file": "memcached.qcow2", "sha256": "old"},
        "netpipe": {"file": "netpipe.qcow2", "sha256": "older"}}}))
    tree = {"osv_commit": "abc", "patches": {"tcp.patch": "123"}}
    build.merge_build_info({**tree, "images": {
        "netpipe": {"file": "netpipe.qcow2", "sha256": "new", **tree}}}, str(path))
    info = json.loads(path.read_text())
    assert info["patches"] == {"tcp.patch": "123"}
    assert info["images"]["netpipe"] == {"file": "netpipe.qcow2", "sha256": "new", **tree}
    assert info["images"]["memcached"] == {"file": "memcached.qcow2", "sha256": "old",
                                           "osv_commit": None, "patches": None}


def test_osvs_nptcp_compiles_against_the_stubs_of_nom_main_cs_current_interface(tmp_path):
    # nom_main.c is nom's NetPIPE front end; the OSv image compiles it against stubs/ (no
    # controller, no profile). A change to what nom_main.c calls must reach the stubs, or the
    # OSv image stops building (5d9a47a's nom_adapt_profile did, unseen where OSv is not built).
    cmd = build.make_command(images.IMAGES["netpipe"]) + ["-s", f"OUT={tmp_path}"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert os.access(tmp_path / "NPtcp", os.X_OK)
