"""The layering check (DESIGN.md): dependencies point down, kernel <- libnom <- drivers <- net
<- apps, and tools/ stands beside them, never included by guest code. Scans every C and
assembly source and header under the guest folders for #include lines, and every Makefile
(and *.mk) there for -I/-isystem/-iquote paths, and names file and line of each include that
reaches a layer above the includer's own, or into tools/.

    python3 tools/layering.py [ROOT]     prints the violations; exit 1 if any, 0 if none

How an #include is placed in a layer: a quoted name is looked up beside the includer first
(so "../../apps/x.h" is caught); otherwise every file of the tree whose path ends with the
name is a candidate (<nom/net.h> is net/include/nom/net.h). The include is a violation only
when no candidate is in the includer's layer or below it: a name the tree does not hold
(<stdint.h>, lwIP's headers under build/) is outside the check. Host-side code inside the
guest folders (libFuzzer harnesses in `fuzz/` folders, built by tools/fuzz; host tests, in a
`tests/` folder but not `tests/guest/` nor apps/tests/) compiles against glibc, whose headers
(<stdio.h>, <pthread.h>) are not libnom's of the same name, and may include from tools/;
never from a layer above."""
import argparse
import os
import re
import sys

# Lower number = lower layer. Drivers sit under net (net's netif drives drivers/virtio-net).
LAYERS = {"kernel": 0, "libnom": 1, "drivers": 2, "net": 3, "apps": 4}
TOOLS = "tools"
SOURCE_EXT = (".c", ".h", ".S", ".s")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
MAKE_FLAG = re.compile(r'(?:^|\s)-(?:I|isystem|iquote)\s*(\S+)')
MAKE_ASSIGN = re.compile(r'^\s*(?:override\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*(?::=|\?=|=|\+=)\s*(.*)$')
MAKE_VAR = re.compile(r'\$[({]([A-Za-z_][A-Za-z0-9_]*)[)}]')
SKIP_DIRS = {".git", "build", "__pycache__"}


def layer_of(root, path):
    """The top folder of path inside root if it is a layer or tools/, else None."""
    rel = os.path.relpath(os.path.abspath(path), root)
    if rel.startswith(".."):
        return None
    top = rel.split(os.sep)[0]
    return top if top in LAYERS or top == TOOLS else None


HOST_INCLUDE_DIRS = ("/usr/include", "/usr/include/x86_64-linux-gnu")


def is_host_side(root, path):
    """libFuzzer harnesses and host tests: built with the host's compiler and glibc."""
    parts = os.path.relpath(path, root).split(os.sep)[:-1]
    if "fuzz" in parts:
        return True
    return "tests" in parts and "guest" not in parts and parts[:2] != ["apps", "tests"]


def is_host_system_header(name):
    return any(os.path.isfile(os.path.join(d, name)) for d in HOST_INCLUDE_DIRS)


def walk(root, tops, want):
    for top in tops:
        for d, dirs, files in os.walk(os.path.join(root, top)):
            dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS)
            for f in sorted(files):
                if want(f):
                    yield os.path.join(d, f)


def index_headers(root):
    """Every file under the layers and tools/, by its path relative to root."""
    return [os.path.relpath(p, root)
            for p in walk(root, list(LAYERS) + [TOOLS], lambda f: True)]


def candidates(root, includer, kind, name, files):
    """The files of the tree an #include could mean (absolute paths)."""
    if kind == '"':
        beside = os.path.normpath(os.path.join(os.path.dirname(includer), name))
        if os.path.isfile(beside):
            return [beside]
    suffix = os.sep + os.path.normpath(name)
    return [os.path.join(root, f) for f in files
            if ("/" + f).endswith(suffix) and ".." not in name.split("/")]


def offends(root, includer, targets):
    """Why includer may not use any of targets (all of them offend), or None."""
    own = layer_of(root, includer)
    if not targets:
        return None
    reasons = []
    for t in targets:
        lt = layer_of(root, t)
        if lt == TOOLS and not is_host_side(root, includer):
            reasons.append(f"tools/ ({os.path.relpath(t, root)})")
        elif lt in LAYERS and LAYERS[lt] > LAYERS[own]:
            reasons.append(f"{lt}/ above {own}/ ({os.path.relpath(t, root)})")
        else:
            return None
    return reasons[0]


def check_sources(root, files):
    out = []
    for path in walk(root, LAYERS, lambda f: f.endswith(SOURCE_EXT)):
        with open(path, errors="replace") as fh:
            for n, line in enumerate(fh, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                kind, name = m.group(1), m.group(2)
                if kind == "<" and is_host_side(root, path) and is_host_system_header(name):
                    continue  # glibc's, on the host
                why = offends(root, path, candidates(root, path, kind, name, files))
                if why:
                    spelled = m.group(0).strip()
                    out.append(f"{os.path.relpath(path, root)}:{n}: {spelled} from {why}")
    return out


def expand(value, variables, depth=0):
    """Make's $(VAR) references replaced by their (textual) values, unknown ones left."""
    if depth > 10:
        return value
    new = MAKE_VAR.sub(lambda m: variables.get(m.group(1), m.group(0)), value)
    return new if new == value else expand(new, variables, depth + 1)


def check_makefiles(root):
    out = []
    is_make = lambda f: f == "Makefile" or f.endswith(".mk")  # noqa: E731
    for path in walk(root, LAYERS, is_make):
        here = os.path.dirname(path)
        variables = {"TOP": root, "CURDIR": here, "BUILD": os.path.join(root, "build")}
        with open(path, errors="replace") as fh:
            lines = fh.read().replace("\\\n", " \n").splitlines()  # keep line numbers
        for line in lines:
            m = MAKE_ASSIGN.match(line)
            if m and m.group(1) not in variables:
                variables[m.group(1)] = m.group(2).strip()
        for n, line in enumerate(lines, 1):
            for flag in MAKE_FLAG.findall(line):
                d = expand(flag, variables)
                if "$" in d:
                    continue  # a variable of another file: not ours to guess
                d = os.path.normpath(os.path.join(here, d))
                why = offends(root, path, [d]) if os.path.isdir(d) else None
                if why:
                    out.append(f"{os.path.relpath(path, root)}:{n}: include path {flag} "
                               f"reaches {why}")
    return out


def violations(root):
    """Every violation under root, as 'file:line: what' strings."""
    root = os.path.abspath(root)
    return check_sources(root, index_headers(root)) + check_makefiles(root)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("root", nargs="?", default=os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), help="the tree to check (default: this repository)")
    args = ap.parse_args(argv)
    found = violations(args.root)
    for v in found:
        print(v)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
