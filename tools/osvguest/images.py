"""What each OSv image build.py makes holds and runs: a Debian binary, its files, command line.

Pure data and text: the three images the comparison needs (memcached, nginx as the web server,
NetPIPE's NPtcp), the OSv module (module.py + the lines added to the usr.manifest that OSv's
scripts/manifest_from_host.sh makes for the binary) written for each, the guest command line
and the Debian packages a build needs. build.py runs OSv's build with them.

Each image serves what the Linux guest serves (tools/linuxguest), on the same port with the same
options (loadgen.apps), on the static address netlab.GUEST_IP: OSv's --ip option sets it, so
the image boots ready without DHCP.
"""
import os
import shlex
from dataclasses import dataclass, field

import netlab
from loadgen import apps

HERE = os.path.dirname(os.path.abspath(__file__))
TOOLS = os.path.dirname(HERE)
BUILD = os.environ.get("BUILD") or os.path.join(os.path.dirname(TOOLS), "build")
INDEX_HTML = os.path.join(TOOLS, "linuxguest", "rootfs", "index.html")
NETMASK = "255.255.255.0"
MODULE_PREFIX = "nom-"  # our modules in OSv's apps/ folder, apart from osv-apps' own

# OSv's build on Debian 12: its scripts/setup.py lists Debian 9's names (python-dpkt,
# openjdk-8, ...) and many extras (maven, ant, gdb) only some apps need. These are the ones
# the build that succeeded here had (not each proven necessary; genromfs, the autotools,
# bison and flex come from setup.py's list, and OSv's Makefile and scripts/build name none of
# them): the compilers, Boost (the kernel includes its headers), qemu-img (usr.img), python3-
# pyelftools (Debian's name for the elftools OSv's scripts import) and pax-utils' lddtree
# (manifest_from_host.sh).
BUILD_PACKAGES = (
    "build-essential", "libboost-dev", "libboost-system-dev", "libboost-filesystem-dev",
    "libboost-program-options-dev", "libboost-test-dev", "libboost-timer-dev",
    "libboost-chrono-dev", "genromfs", "autoconf", "automake", "libtool", "bison", "flex",
    "gawk", "qemu-utils", "python3", "python3-pyelftools", "pax-utils", "libedit-dev", "git",
)

# nginx's configuration in the OSv image: the Linux guest's (tools/linuxguest/rootfs/nginx.conf)
# with what OSv lacks taken out: no master process nor daemon (one process), logs to the console.
NGINX_CONF = f"""# nginx of the OSv comparison guest (from tools/osvguest/images.py): one worker, no
# master process (OSv runs one process), the 175-byte page, no access log, long keep-alive.
daemon off;
master_process off;
worker_processes 1;
pid /tmp/nginx.pid;
error_log stderr error;

events {{
    worker_connections 4096;
}}

http {{
    access_log off;
    sendfile on;
    tcp_nodelay on;
    keepalive_timeout 65;
    keepalive_requests 1000000;
    default_type text/html;
    client_body_temp_path /tmp/client_body;
    proxy_temp_path /tmp/proxy;
    fastcgi_temp_path /tmp/fastcgi;
    uwsgi_temp_path /tmp/uwsgi;
    scgi_temp_path /tmp/scgi;
    server {{
        listen {apps.HTTP_PORT} default_server;
        root /srv/www;
        index index.html;
    }}
}}
"""


@dataclass(frozen=True)
class Image:
    """One OSv image: name (of the image file and the osvguest application it serves), the
    Debian package and binary it runs, the binary's arguments, files put in the image
    (guest path -> ("text", content) or ("host", path)) and symbolic links (guest -> target)."""
    name: str
    app: str
    package: str
    binary: str
    args: tuple
    files: dict = field(default_factory=dict)
    links: dict = field(default_factory=dict)
    make_dir: str = None  # a Makefile folder that builds binary (None: Debian's, installed)

    @property
    def guest_binary(self):
        """Where manifest_from_host.sh puts the binary: / + its file name."""
        return "/" + os.path.basename(self.binary)

    @property
    def module(self):
        """The name of the OSv module build.py writes for this image."""
        return MODULE_PREFIX + self.name


IMAGES = {
    "memcached": Image(
        name="memcached", app="memcached", package="memcached", binary="/usr/bin/memcached",
        # As the Linux guest runs it: one worker thread for the one vCPU, 64 MiB of items.
        args=("-u", "root", "-l", "0.0.0.0", "-p", str(apps.MEMCACHED_PORT), "-U", "0",
              "-t", "1", "-m", "64", "-c", "4096")),
    "nginx": Image(
        name="nginx", app="nhttpd", package="nginx-light", binary="/usr/sbin/nginx",
        args=("-c", "/etc/nginx/nginx.conf"),
        files={"/etc/nginx/nginx.conf": ("text", NGINX_CONF),
               "/srv/www/index.html": ("host", INDEX_HTML)},
        # Debian's nginx opens its compiled-in log before reading the configuration.
        links={"/var/log/nginx": "/tmp", "/var/lib/nginx": "/tmp"}),
    "netpipe": Image(
        # nom's NPtcp (NetPIPE with nom's run-as-a-call port, nptcp/README.md) built for Linux:
        # OSv runs one program and powers off when it returns, and Debian's NPtcp serves one
        # session; this one serves session after session on both ports, as nom's does.
        name="netpipe", app="netpipe", package=None,
        binary=os.path.join(BUILD, "osv", "nptcp", "NPtcp"),
        args=("--repeat", "--quiet", *apps.NETPIPE_PINGPONG_ARGS, "--and",
              *apps.NETPIPE_BIDIR_ARGS),
        files={"/etc/protocols": ("host", "/etc/protocols")},
        make_dir=os.path.join(HERE, "nptcp")),
}


def guest_cmdline(image, guest_ip=netlab.GUEST_IP):
    """OSv's command line for image: the static address (OSv's --ip=IF,ADDR,MASK), then the
    application and its arguments."""
    return shlex.join([f"--ip=eth0,{guest_ip},{NETMASK}", image.guest_binary, *image.args])


def module_py(image, guest_ip=netlab.GUEST_IP):
    """The text of image's OSv module.py: runs guest_cmdline() at boot."""
    return ("# OSv module written by nom's tools/osvguest/build.py: Debian's "
            f"{image.binary}, as the Linux guest runs it.\n"
            "from osv.modules import api\n\n"
            f"default = api.run(cmdline={guest_cmdline(image, guest_ip)!r})\n")


def manifest_extra(image, module_dir):
    """usr.manifest lines for image's files and links (OSv's "GUEST: HOST" and
    "GUEST: ->TARGET" forms); text files are written into module_dir by build.py
    (module_files) and named by their path there."""
    lines = []
    for guest, (kind, source) in sorted(image.files.items()):
        host = os.path.join(module_dir, "files", guest.lstrip("/")) if kind == "text" else source
        lines.append(f"{guest}: {host}")
    for guest, target in sorted(image.links.items()):
        lines.append(f"{guest}: ->{target}")
    return lines


def module_files(image, module_dir, guest_ip=netlab.GUEST_IP):
    """{path relative to module_dir: text} that build.py writes: module.py and the text files."""
    out = {"module.py": module_py(image, guest_ip)}
    for guest, (kind, source) in image.files.items():
        if kind == "text":
            out[os.path.join("files", guest.lstrip("/"))] = source
    return out


def packages_needed(images, installed, exists=os.path.exists):
    """Debian packages to install before building images: the build's own and each image's
    package whose binary is missing (exists(path) is False); installed(package) says whether
    dpkg has a package."""
    wanted = list(BUILD_PACKAGES) + [i.package for i in images
                                     if i.package and not exists(i.binary)]
    return [p for p in dict.fromkeys(wanted) if not installed(p)]
