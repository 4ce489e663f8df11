"""What the controller will choose with a profile: for each utility function, load class and
price, the W maximizing the utility (tools/profit's functions; libnom's C picks the same,
its host tests check that) and the expected profit rate, as a Markdown table. Points measured
under the exit-cost model are shown as the controller reads them, in the time of the hardware
the model stands for (profile_data.kvm_equivalent).

    python3 tools/profile/choices.py apps/nhttpd/profile/profile.json --prices 1,10
"""
import argparse
import sys

from profile_data import CLASSES, kvm_equivalent, load_profile
from profit.utility import KINDS, utility


def best(points, kind, price):
    """(point, U) of the best W: the lowest W among equals, as libnom's nom_adapt_best."""
    top = None
    for p in points:
        u = utility(kind, p["t_gbps"], p["latency_us"], p["jitter_us"], price)
        if top is None or u > top[1]:
            top = (p, u)
    return top


def table(profile, prices):
    lines = ["| utility | load | price ($/Gbit) | W (us) | T (Mbit/s) | latency (us) | "
             "jitter (us) | expected profit ($/s) |", "|---|---|---|---|---|---|---|---|"]
    for kind in KINDS:
        for cls in CLASSES:
            for price in prices:
                p, u = best(profile["classes"][cls], kind, price)
                lines.append(f"| {kind} | {cls} | {price:g} | {p['w_us']} | "
                             f"{p['t_gbps'] * 1e3:.3f} | {p['latency_us']:.0f} | "
                             f"{p['jitter_us']:.0f} | {u:.6f} |")
    return "\n".join(lines)


def points_table(profile):
    lines = ["| load | W (us) | requests/s | T (Mbit/s) | latency (us) | jitter (us) |",
             "|---|---|---|---|---|---|"]
    for cls in CLASSES:
        for p in profile["classes"][cls]:
            lines.append(f"| {cls} | {p['w_us']} | {p['ops_per_s']:.0f} | "
                         f"{p['t_gbps'] * 1e3:.3f} | {p['latency_us']:.0f} | "
                         f"{p['jitter_us']:.0f} |")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("profile")
    ap.add_argument("--prices", default="1,10", help="$/Gbit, comma-separated (%(default)s)")
    args = ap.parse_args(argv)
    profile = kvm_equivalent(load_profile(args.profile))
    prices = [float(p) for p in args.prices.split(",")]
    print(f"{profile['app']} ({profile.get('accel', '?')}; {profile.get('command', '')}; "
          f"{profile.get('time_base', 'as measured')})\n")
    print(points_table(profile) + "\n")
    print(table(profile, prices))
    return 0


if __name__ == "__main__":
    sys.exit(main())
