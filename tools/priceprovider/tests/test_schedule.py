"""The price schedule: parsing, lookups, rejection of bad schedules."""
import pytest

from priceprovider import DEFAULT, Schedule

pytestmark = pytest.mark.unit


def test_default_is_the_papers_one_then_ten_after_sixty_seconds():
    assert DEFAULT.steps == [(0.0, 1.0), (60.0, 10.0)]
    assert DEFAULT.price_at(0) == 1.0 and DEFAULT.price_at(59.999) == 1.0
    assert DEFAULT.price_at(60) == 10.0 and DEFAULT.price_at(1e9) == 10.0
    assert DEFAULT.change_times() == [60.0]


def test_file_form_with_comments_and_newlines():
    s = Schedule.parse("# night\n0:2.5\n30 : 4   # busy\n\n90:0\n")
    assert s.steps == [(0.0, 2.5), (30.0, 4.0), (90.0, 0.0)]
    assert s.index_at(-1) == 0 and s.index_at(45) == 1


@pytest.mark.parametrize("text", ["", "5:1", "0:1, 0:2", "0:1, 30:2, 20:3", "0:-1",
                                  "0:x", "0 1", "0:inf", "0:1:2"])
def test_bad_schedules_are_rejected(text):
    with pytest.raises(ValueError):
        Schedule.parse(text)
