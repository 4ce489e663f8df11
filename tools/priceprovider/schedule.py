"""A price schedule: which bandwidth price is in force how many seconds after the clock starts.

Written as steps `SECONDS:PRICE` separated by commas or newlines ('#' starts a comment), e.g.
the paper's section 6.1 schedule "0:1, 60:10" (1 $/Gbit, then 10 $/Gbit after 60 s). The first
step starts at 0; starts strictly increase; prices are finite and >= 0. The last price holds
forever.
"""
import bisect
import math
import re

DEFAULT_TEXT = "0:1, 60:10"


class Schedule:
    def __init__(self, steps):
        """steps: [(start_s, price)]. Raises ValueError on an invalid schedule."""
        steps = [(float(s), float(p)) for s, p in steps]
        if not steps or steps[0][0] != 0:
            raise ValueError("a schedule starts with a step at 0 s")
        for (a, _), (b, _) in zip(steps, steps[1:]):
            if b <= a:
                raise ValueError(f"step starts must increase ({a} then {b})")
        for s, p in steps:
            if not math.isfinite(s) or not math.isfinite(p) or p < 0:
                raise ValueError(f"bad step {s}:{p}")
        self.steps = steps
        self._starts = [s for s, _ in steps]

    @classmethod
    def parse(cls, text):
        """Parses 'SECONDS:PRICE' steps separated by commas or newlines."""
        steps = []
        for line in text.splitlines():
            for item in line.split("#", 1)[0].split(","):
                item = item.strip()
                if not item:
                    continue
                m = re.fullmatch(r"([^:\s]+)\s*:\s*(\S+)", item)
                if not m:
                    raise ValueError(f"schedule step {item!r} is not SECONDS:PRICE")
                try:
                    steps.append((float(m.group(1)), float(m.group(2))))
                except ValueError:
                    raise ValueError(f"schedule step {item!r} is not numeric") from None
        return cls(steps)

    def index_at(self, t_s):
        """Index of the step in force t_s seconds after the start (t_s < 0 counts as 0)."""
        return max(0, bisect.bisect_right(self._starts, t_s) - 1)

    def price_at(self, t_s):
        return self.steps[self.index_at(t_s)][1]

    def change_times(self):
        """The times (s) at which the price changes."""
        return self._starts[1:]

    def text(self):
        return ", ".join(f"{s:g}:{p:g}" for s, p in self.steps)

    def __repr__(self):
        return f"Schedule({self.text()!r})"


DEFAULT = Schedule.parse(DEFAULT_TEXT)
