"""Does every collected test carry exactly one of the markers unit, boot, slow (pytest.ini)?
The root conftest.py lists the ones that do not as pytest collects, before `-m` deselects
anything, so `make test-fast` (-m unit) cannot drop an unmarked test silently."""
import pytest

import conftest

pytestmark = pytest.mark.unit


def test_every_collected_test_has_exactly_one_marker(request):
    wrong = conftest.unmarked_tests(request.config)
    assert not wrong, ("tests without exactly one of unit, boot, slow (mark the module with "
                       "pytestmark = pytest.mark.unit, or each test):\n" + "\n".join(wrong))
