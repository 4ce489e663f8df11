"""tools/profile/pareto.py: which measured points are on the frontier."""
import pytest

import pareto

pytestmark = pytest.mark.unit

OBJ2 = (("t_gbps", "max"), ("latency_us", "min"))


def pt(t, lat, exits=None):
    p = {"t_gbps": t, "latency_us": lat}
    if exits is not None:
        p["exits_per_req"] = exits
    return p


def test_a_dominated_point_is_left_out():
    pts = [pt(1.0, 100), pt(0.9, 120), pt(1.2, 150)]
    assert pareto.frontier(pts, OBJ2) == [0, 2]  # 1 is slower and later than 0


def test_a_third_objective_can_save_a_point():
    pts = [pt(1.0, 100, 0.5), pt(0.9, 120, 0.1)]
    assert pareto.frontier(pts, OBJ2) == [0]
    assert pareto.frontier(pts) == [0, 1]  # fewer exits: a trade, not a loss


def test_equal_points_are_both_kept():
    assert pareto.frontier([pt(1, 100), pt(1, 100)], OBJ2) == [0, 1]


def test_a_point_missing_a_figure_is_not_guessed():
    pts = [pt(1.0, 100), pt(2.0, 50, None)]
    assert pareto.frontier(pts) == []  # neither has exits_per_req
    assert pareto.frontier(pts, OBJ2) == [1]


def test_an_unknown_sense_is_refused():
    with pytest.raises(ValueError, match="'max' or 'min'"):
        pareto.frontier([pt(1, 1)], (("t_gbps", "most"),))


def test_committed_explorations_hold_their_own_frontier():
    """The frontier a result file lists is the one its points have (a hand edit of either
    shows), and it says where and how it was measured."""
    import json
    from pathlib import Path
    results = sorted((Path(__file__).resolve().parent.parent / "results").glob("explore-*.json"))
    assert results
    for path in results:
        r = json.loads(path.read_text())
        assert r["accel"] in ("tcg", "kvm") and r["command"] and r["kvmcost"]
        for cls in ("many", "single"):
            c = r["classes"][cls]
            assert c["pareto"] == pareto.frontier(c["points"]), (path.name, cls)


def test_the_plot_is_drawn(tmp_path):
    import explore
    pts = [dict(pt(1e-3 * (i + 1), 100.0 * (3 - i), 0.5), w_us=10 * i, idle_poll_us=50)
           for i in range(3)]
    result = {"app": "memcached", "accel": "tcg", "kvmcost": "off",
              "classes": {c: {"points": pts, "pareto": pareto.frontier(pts)}
                          for c in ("many", "single")}}
    explore.plot(result, tmp_path / "p.png")
    assert (tmp_path / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
