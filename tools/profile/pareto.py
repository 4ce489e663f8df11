"""The Pareto frontier of measured operating points: the points no other point beats on every
objective at once (Wayfinder's view of a configuration space: what a knob setting can trade,
not one best setting). Objectives are (field, "max" | "min") pairs over the points' dicts; a
point missing a field is left out of the frontier, not guessed."""

THROUGHPUT_LATENCY_EXITS = (("t_gbps", "max"), ("latency_us", "min"), ("exits_per_req", "min"))


def _oriented(point, objectives):
    """The point's objectives as values to maximize, or None if one is missing."""
    out = []
    for field, sense in objectives:
        v = point.get(field)
        if not isinstance(v, (int, float)) or isinstance(v, bool):
            return None
        out.append(v if sense == "max" else -v)
    return out


def dominates(a, b):
    """a is at least as good as b everywhere and better somewhere (both oriented to max)."""
    return all(x >= y for x, y in zip(a, b)) and any(x > y for x, y in zip(a, b))


def frontier(points, objectives=THROUGHPUT_LATENCY_EXITS):
    """Indices of the points on the frontier, in the points' order. Equal points are all kept
    (neither dominates the other)."""
    for _, sense in objectives:
        if sense not in ("max", "min"):
            raise ValueError(f"objective sense {sense!r}: 'max' or 'min'")
    vals = [_oriented(p, objectives) for p in points]
    return [i for i, v in enumerate(vals) if v is not None
            and not any(w is not None and dominates(w, v) for w in vals)]
