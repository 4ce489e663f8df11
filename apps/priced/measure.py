"""How long from a provider price change to a subscriber seeing it (README.md "Measured").

    python3 apps/priced/measure.py [--period-ms 1000,200] [--steps 10]

For each poll period: boots nom (TCG unless real KVM) with priced and pricewatch, a real
tools/priceprovider on the host held at its first price; then, --steps times, waits a random
0-1.5 periods (so a change falls anywhere in priced's poll cycle), steps the provider with
SIGUSR2 and times it:
  host:  SIGUSR2 -> pricewatch's line in the serial log (the whole path, read every 5 ms);
  guest: priced's publication -> pricewatch awake (the kernel's notification and the wake-up;
         both times from the guest's TSC, as the two print them, to the microsecond).
  priced's CPU: the share of the guest's time priced ran between the first and the last change
         (its board row's cpu_ns, as pricewatch prints it; under TCG, emulated time).
Prints one table row per period (median, mean, max, in ms) and, with --json, the raw samples."""
import argparse
import json
import random
import re
import statistics
import sys
import time

import toolflags
from priced_vm import PricedVM, Provider, built


def run(period_ms, steps):
    schedule = ", ".join(f"{i * 1000}:{i + 1}" for i in range(steps + 1))
    provider = Provider(schedule=schedule, hold=True)
    host, guest = [], []
    try:
        with PricedVM(provider.port, priced_args=[f"--period-ms={period_ms}"]) as vm:
            vm.wait_watch(1.0, timeout=180)
            for i in range(steps):
                price = float(i + 2)
                time.sleep(random.uniform(0, 1.5) * period_ms / 1000)
                provider.step()
                waited, (_, _, seen_at) = vm.wait_watch(price, timeout=60)
                host.append(waited * 1000)
                guest.append((seen_at - vm.published_at(price)) * 1000)
            accel = vm.vm.accel
            cpu = [(float(t), int(ms)) for t, ms in re.findall(
                r"^pricewatch: price .* at ([\d.]+) s .*; priced cpu (\d+) ms\)", vm.log(), re.M)]
    finally:
        provider.stop()
    share = (cpu[-1][1] - cpu[0][1]) / ((cpu[-1][0] - cpu[0][0]) * 1000)
    return {"period_ms": period_ms, "accel": accel, "host_ms": host, "guest_notify_ms": guest,
            "priced_cpu_share": share}


def summary(xs):
    return f"{statistics.median(xs):7.1f} {statistics.mean(xs):7.1f} {max(xs):7.1f}"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--period-ms", type=toolflags.int_list, default=[1000, 200],
                   metavar="MS[,MS...]", help="priced's poll periods (default 1000,200)")
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--output", help="JSON of the raw samples")
    a = p.parse_args()
    if not built():
        sys.exit("build first: make (needs the kernel, priced.elf and pricewatch.elf)")
    results = [run(period, a.steps) for period in a.period_ms]
    print(f"accelerator {results[0]['accel']}, {a.steps} price changes per period")
    print("period ms | change -> subscriber, host (median mean max ms) | "
          "publish -> subscriber, guest (median mean max ms) | priced's CPU")
    for r in results:
        print(f"{r['period_ms']:9} | {summary(r['host_ms'])} | {summary(r['guest_notify_ms'])} | "
              f"{r['priced_cpu_share'] * 100:5.2f} %")
    if a.output:
        with open(a.output, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
