"""verdict_across.py: one folder's adaptive runs judged against another's fixed W runs and
guests, on hand-made records whose profits are known (test_verdict's: a run serving T Gbit/s
under "many" and T/2 under "single" earns 1440 T under the penalty function)."""
import importlib.util
import os

import pytest

from experiment import verdict_across
from experiment.plan import Plan
from experiment.results import Results


def _sibling(name):
    """A module of this folder (pytest imports tests by path: no sibling imports)."""
    spec = importlib.util.spec_from_file_location(
        name, os.path.join(os.path.dirname(__file__), f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ONLINE, runs = _sibling("test_verdict").ONLINE, _sibling("test_verdict").runs

pytestmark = pytest.mark.unit

W0 = {"name": "w=0", "w_us": 0}


def folder(path, records, **plan):
    res = Results(str(path))
    res.write_json("plan.json", dict(Plan(**{"duration_s": 120, "change_at_s": 60,
                                             "kvmcost": "off", **plan}).to_json()))
    for r in records:
        res.write_json(f"raw/{r['app']}/{r['guest']}-{r['variant']['name']}/run{r['run']}.json", r)
    return str(path)


def penalty_online_row(text):
    return next(line for line in text.splitlines()
                if line.startswith("| memcached | penalty | online |"))


def test_adaptive_runs_of_one_folder_meet_the_bar_of_the_others_fixed_w(tmp_path):
    new = folder(tmp_path / "new", runs("nom", ONLINE, [0.95, 0.95, 0.95])
                 + runs("nom", W0, [1.0, 1.0, 1.0]))
    old = folder(tmp_path / "full", runs("nom", W0, [1.0, 1.1, 0.9])
                 + runs("nom", {"name": "w=10", "w_us": 10}, [0.5, 0.5, 0.5])
                 + runs("nom", ONLINE, [0.1, 0.1, 0.1])          # the old learner: left out
                 + runs("linux", {"name": "default"}, [0.3, 0.3, 0.3]))
    with open(verdict_across.write(new, old)) as f:
        text = f.read()
    row = penalty_online_row(text)
    assert "| 1,368 ± 0 (n=3) |" in row  # the new adaptive runs, not the old ones (144)
    assert "W=0: 1,440 ± 144 (n=3)" in row and "| yes |" in row and "Linux (432): yes" in row
    # the drift check shows W=0 of both folders side by side
    assert "| memcached | W=0 | penalty | 1,440 ± 0 (n=3) | 1,440 ± 144 (n=3) |" in text


def test_folders_with_other_economics_are_refused(tmp_path):
    new = folder(tmp_path / "new", runs("nom", ONLINE, [1.0]))
    old = folder(tmp_path / "full", runs("nom", W0, [1.0]), change_at_s=30)
    with pytest.raises(SystemExit, match="change_at_s"):
        verdict_across.write(new, old)


def test_a_folder_without_a_plan_is_a_usage_error(tmp_path, capsys):
    with pytest.raises(SystemExit):
        verdict_across.main([str(tmp_path), "--baseline", str(tmp_path)])
    assert "not a results folder" in capsys.readouterr().err
