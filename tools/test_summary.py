"""Prints the one closing line of `make test`: "N passed, N failed" (skips appended if any).

Reads the JUnit XML that pytest wrote; errors (a failing fixture) count as failures, and a run
that collected no test at all is reported as one failure, so CI never passes on nothing.
"""
import argparse
import xml.etree.ElementTree as ET


def summarize(path):
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return 0, 1, 0
    suites = [root] if root.tag == "testsuite" else list(root)
    total = failed = skipped = 0
    for suite in suites:
        total += int(suite.get("tests", 0))
        failed += int(suite.get("failures", 0)) + int(suite.get("errors", 0))
        skipped += int(suite.get("skipped", 0))
    if total == 0:
        return 0, 1, 0
    return total - failed - skipped, failed, skipped


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("junit_xml", help="the file pytest's --junitxml wrote")
    passed, failed, skipped = summarize(p.parse_args(argv).junit_xml)
    line = f"{passed} passed, {failed} failed"
    print(line + (f", {skipped} skipped" if skipped else ""))


if __name__ == "__main__":
    main()
