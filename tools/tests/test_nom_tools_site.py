"""Which checkout's tools/ a directly run script gets (nom_tools_site.py): the script's, else
the current directory's, else the bootstrapped one."""
import pytest

from nom_tools_site import checkout_tools, script_of, tools_path

pytestmark = pytest.mark.unit


@pytest.fixture
def checkouts(tmp_path):
    for name in ("a", "b"):
        (tmp_path / name / "tools" / "nomvm").mkdir(parents=True)
        (tmp_path / name / "tools" / "nomvm" / "__init__.py").write_text("")
        (tmp_path / name / "tools" / "bench").mkdir()
        (tmp_path / name / "tools" / "bench" / "run.py").write_text("")
    (tmp_path / "elsewhere").mkdir()
    return tmp_path


def test_the_scripts_checkout_wins_over_the_current_directory(checkouts):
    script = str(checkouts / "a" / "tools" / "bench" / "run.py")
    assert tools_path(["python3", script, "--help"], str(checkouts / "b"), "/boot/tools") == \
        str(checkouts / "a" / "tools")


def test_options_before_the_script_are_skipped_with_their_values(checkouts):
    script = str(checkouts / "a" / "tools" / "bench" / "run.py")
    assert script_of(["python3", "-u", "-W", "ignore", "-X", "dev", script]) == script


def test_without_a_script_the_current_directory_then_the_bootstrapped_one(checkouts):
    assert tools_path(["python3", "-m", "pytest"], str(checkouts / "b" / "tools" / "bench"),
                      "/boot/tools") == str(checkouts / "b" / "tools")
    assert tools_path(["python3", "-c", "pass"], str(checkouts / "elsewhere"), "/boot/tools") \
        == "/boot/tools"
    assert tools_path(["python3"], "/", "/boot/tools") == "/boot/tools"


def test_a_script_outside_any_checkout_falls_back(checkouts):
    script = checkouts / "elsewhere" / "x.py"
    script.write_text("")
    assert checkout_tools(str(checkouts / "elsewhere")) is None
    assert tools_path(["python3", str(script)], str(checkouts / "elsewhere"), "/boot/tools") \
        == "/boot/tools"
