"""The progress display: time remaining from what is left, boot time learnt as it goes."""
import io

import pytest

from experiment.progress import Progress, fmt_duration

pytestmark = pytest.mark.unit


class Clock:
    t = 0.0

    def __call__(self):
        return self.t


def test_remaining_time_counts_current_step_and_cells_to_come():
    clock, out = Clock(), io.StringIO()
    p = Progress(total_cells=3, cell_seconds=120, boot_estimate_s=30, stream=out, clock=clock)
    assert p.remaining_s() == 3 * 150
    p.step("a: booting", 30, after_s=120)
    clock.t = 10
    assert p.remaining_s() == 20 + 120 + 2 * 150
    p.boot_took(10)  # boots are faster than guessed: later cells get 10 s
    p.step("a: many", 60, after_s=60)
    assert p.remaining_s() == 60 + 60 + 2 * 130
    p.cell_done()
    assert p.remaining_s() == 2 * 130
    assert "about 4m20s left" in out.getvalue().splitlines()[-1]


def test_cells_that_cannot_run_cost_nothing():
    clock = Clock()
    p = Progress(total_cells=4, cell_seconds=100, boot_estimate_s=20, stream=io.StringIO(),
                 clock=clock, runnable_cells=2)
    assert p.remaining_s() == 2 * 120
    p.cell_done()  # a "not run" cell: no step began
    assert p.remaining_s() == 2 * 120
    p.step("b: booting", 20, after_s=100)
    p.cell_done()
    assert p.remaining_s() == 120


def test_durations_read_well():
    assert fmt_duration(59.6) == "1m00s"
    assert fmt_duration(3 * 3600 + 65) == "3h01m05s"
