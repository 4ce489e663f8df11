"""Does every host tool behave like its peers on the command line? `--help` prints usage and
exits 0 without building or booting anything, and a flag it does not know ends it with exit
status 2 and the reason on stderr (argparse's behaviour). The tools are found in the tree:
every program (a .py with an `if __name__ == "__main__":` block, or a package's __main__.py),
so a new tool is covered without touching this file."""
import concurrent.futures
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

TOP = Path(__file__).resolve().parents[2]
FOLDERS = ("kernel", "libnom", "drivers", "net", "apps", "tools")  # pytest.ini's testpaths
MAIN_GUARD = re.compile(r"""^if __name__ == ["']__main__["']:""", re.M)


def tools():
    """[(name, argv prefix)] of every program in the tree."""
    found = []
    for folder in FOLDERS:
        for path in sorted((TOP / folder).rglob("*.py")):
            rel = path.relative_to(TOP)
            if path.name.startswith("test_") or path.name == "conftest.py":
                continue
            if path.name == "__main__.py" and rel.parts[0] == "tools":
                package = ".".join(rel.parent.parts[1:])
                found.append((f"python3 -m {package}", [sys.executable, "-m", package]))
            elif MAIN_GUARD.search(path.read_text(errors="replace")):
                found.append((str(rel), [sys.executable, str(path)]))
    return found


TOOLS = tools()


def bare_env(bin_dir):
    """The environment with a PATH that holds only python3: a --help that runs make, a
    compiler or QEMU fails to find it instead of building or booting."""
    os.symlink(sys.executable, bin_dir / "python3")
    return dict(os.environ, PATH=str(bin_dir))


def run(argv, env, cwd):
    # The timeout only stops a tool that went on to do its job; it is not a speed limit.
    return subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd, timeout=120,
                          stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def answers(tmp_path_factory):
    """{(tool name, flag): (completed process, its working folder)} for --help and
    --no-such-flag of every tool, run a few at a time (each is mostly Python's start-up)."""
    env = bare_env(tmp_path_factory.mktemp("bare-bin"))
    jobs = {(name, flag): (argv + [flag], tmp_path_factory.mktemp("cwd"))
            for name, argv in TOOLS for flag in ("--help", "--no-such-flag")}
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        done = {key: pool.submit(run, argv, env, cwd) for key, (argv, cwd) in jobs.items()}
        return {key: (future.result(), jobs[key][1]) for key, future in done.items()}


def test_the_tree_has_tools():
    names = [name for name, _ in TOOLS]
    assert "tools/nomrun.py" in names and "python3 -m priceprovider" in names, names


@pytest.mark.parametrize("name", [name for name, _ in TOOLS])
def test_help_only_prints_usage(name, answers):
    r, cwd = answers[(name, "--help")]
    assert r.returncode == 0, f"exit {r.returncode}\n{r.stdout[-2000:]}{r.stderr[-3000:]}"
    assert r.stdout.startswith("usage:"), r.stdout[:2000]
    assert list(cwd.iterdir()) == [], "--help wrote files"


@pytest.mark.parametrize("name", [name for name, _ in TOOLS])
def test_unknown_flag_exits_2_with_a_reason(name, answers):
    r, _ = answers[(name, "--no-such-flag")]
    assert r.returncode == 2, f"exit {r.returncode}\n{r.stdout[-2000:]}{r.stderr[-3000:]}"
    assert "error:" in r.stderr and "usage:" in r.stderr, r.stderr[-3000:]
    assert r.stdout == "", r.stdout[-2000:]


def test_without_dilation_a_run_under_a_cost_model_gets_one_calibrated_d(monkeypatch, capsys):
    """toolflags.settle_dilation: one D for every boot of the run (each side's fastest of the
    experiment's reference calibrations), a given --dilation kept, nothing without a model."""
    import argparse

    import toolflags
    from experiment import calibration
    taken = []
    monkeypatch.setattr(calibration, "measure_reference",
                        lambda name: taken.append(name) or {"native_ticks": 2.0, "tcg_ticks": 9.0})
    args = argparse.Namespace(kvmcost="skylake", dilation=None)
    toolflags.settle_dilation(args, "holds")
    assert args.dilation == 4.5 and taken == ["skylake"]
    assert "holds: every boot at D = 4.50" in capsys.readouterr().err
    for given in (argparse.Namespace(kvmcost="skylake", dilation=7.0),
                  argparse.Namespace(kvmcost="off", dilation=None)):
        before = vars(given).copy()
        toolflags.settle_dilation(given, "holds")
        assert vars(given) == before
    assert taken == ["skylake"]
