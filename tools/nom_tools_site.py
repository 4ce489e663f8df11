"""Which checkout's tools/ a host tool imports from when it is run directly (`python3 tools/x.py`).

tools/bootstrap.sh installs this module into site-packages with a nom-tools.pth that calls
add(<the bootstrapped checkout's tools/>) at every Python start. It is the one place that puts
tools/ on the import path (tests/test_import_path.py forbids it everywhere else). A machine may
hold several checkouts (a clean clone for CI, a worktree per branch): a fixed path would send
a script of one checkout to the packages of whichever was bootstrapped last, and its figures
would come from code nobody asked for. So, in this order:

1. the checkout that holds the script being run (found upward from its folder);
2. the checkout around the current directory (`python3 -m ...`, `python3 -c ...`);
3. the bootstrapped checkout.

A checkout is a folder with tools/nomvm/__init__.py. The top Makefile and pytest.ini still put
their own checkout first, so make targets and tests never depend on this.
"""
import os
import sys

# python3's options that take a value as the next argument (`python3 -W ignore x.py`).
_OPTIONS_WITH_VALUE = {"-W", "-X", "--check-hash-based-pycs"}


def checkout_tools(start):
    """The tools/ folder of the checkout at or above start, or None."""
    folder = os.path.abspath(start)
    while True:
        if os.path.isfile(os.path.join(folder, "tools", "nomvm", "__init__.py")):
            return os.path.join(folder, "tools")
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def script_of(argv):
    """The script a python3 command line runs, or None (-m, -c, -, an interactive start)."""
    args = iter(argv[1:])
    for arg in args:
        if arg in ("-m", "-c", "-"):
            return None
        if arg in _OPTIONS_WITH_VALUE:
            next(args, None)
        elif not arg.startswith("-"):
            return arg if os.path.isfile(arg) else None
    return None


def tools_path(argv, cwd, bootstrapped):
    script = script_of(argv)
    starts = ([os.path.dirname(os.path.abspath(script))] if script else []) + [cwd]
    for start in starts:
        found = checkout_tools(start)
        if found:
            return found
    return bootstrapped


def add(bootstrapped):
    try:
        cwd = os.getcwd()
    except OSError:  # started in a removed folder
        cwd = "/"
    path = tools_path(getattr(sys, "orig_argv", sys.argv), cwd, bootstrapped)
    if path not in sys.path:
        sys.path.append(path)
