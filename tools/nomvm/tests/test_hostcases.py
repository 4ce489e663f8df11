"""nomvm.hostcases on a tiny C program of named cases: verdicts, one case, all cases, and
that every failure's message carries the program's output."""
import pytest

from nomvm import hostcases

pytestmark = pytest.mark.unit

PROGRAM = r"""
#include <stdio.h>
#include <string.h>
static const char *names[] = {"adds", "breaks"};
static int run(const char *name) {
    int ok = strcmp(name, "adds") == 0;
    if (!ok) fprintf(stderr, "sanitizer-like report for %s\n", name);
    printf("%s %s%s\n", ok ? "PASS" : "FAIL", name, ok ? "" : ": 1 + 1 == 3");
    return ok;
}
int main(int argc, char **argv) {
    int failures = 0;
    if (argc > 1 && strcmp(argv[1], "--list") == 0) {
        for (int i = 0; i < 2; i++) printf("%s\n", names[i]);
        return 0;
    }
    for (int i = 0; i < 2; i++)
        if (argc < 2 || strcmp(argv[1], names[i]) == 0) failures += !run(names[i]);
    return failures != 0;
}
"""


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    d = tmp_path_factory.mktemp("hostcases")
    (d / "cases.c").write_text(PROGRAM)
    return hostcases.compile_program(d / "cases", [d / "cases.c"],
                                     ["-std=c11", "-Wall", "-Wextra", "-Werror"])


def test_verdicts_read_names_and_a_fail_sticks():
    """Does a case with a FAIL line stay FAIL whatever follows, and do details not leak in?"""
    out = "PASS a (3 reads)\nFAIL b: x == y\nPASS b\nnoise PASS c\n"
    assert hostcases.verdicts(out) == {"a": "PASS", "b": "FAIL"}


def test_listed_cases_and_source_cases(program, tmp_path):
    """Are the cases of --list and of a source pattern read in order?"""
    assert hostcases.list_cases(program) == ["adds", "breaks"]
    src = tmp_path / "t.c"
    src.write_text("  CASE(one),\n  CASE(two),\n")
    assert hostcases.cases_in(src, r"^\s*CASE\((\w+)\),$") == ["one", "two"]


def test_one_passing_case_passes(program):
    """Does a case that says PASS and exits 0 pass?"""
    assert "PASS adds" in hostcases.run_case(program, "adds").stdout


def test_one_failing_case_fails_with_its_output(program):
    """Does a failing case fail with its verdict line and its stderr in the message?"""
    with pytest.raises(AssertionError) as e:
        hostcases.run_case(program, "breaks")
    assert "case breaks: FAIL" in str(e.value) and "1 + 1 == 3" in str(e.value)
    assert "sanitizer-like report for breaks" in str(e.value)


def test_a_case_without_a_verdict_fails(program):
    """Does a case the program does not know (exit 0, no verdict) fail?"""
    with pytest.raises(AssertionError, match="case missing: no verdict"):
        hostcases.run_case(program, "missing")


def test_all_cases_fail_naming_the_failed_ones(program):
    """Does run_all fail naming the failed case, and check the minimum number of verdicts?"""
    with pytest.raises(AssertionError, match="failed cases: breaks"):
        hostcases.run_all(program)
    with pytest.raises(AssertionError, match="1 verdicts, at least 2 expected"):
        hostcases.run_all(program, args=["adds"], min_cases=2)
    assert hostcases.run_all(program, args=["adds"]) == {"adds": "PASS"}


def test_compile_errors_are_shown(tmp_path):
    """Does a program that does not compile fail with the compiler's message?"""
    (tmp_path / "bad.c").write_text("int main(void) { return undeclared; }\n")
    with pytest.raises(AssertionError, match="undeclared"):
        hostcases.compile_program(tmp_path / "bad", [tmp_path / "bad.c"], ["-std=c11"])
