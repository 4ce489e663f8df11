"""`make bench`: issue 4's data-path benchmark (README.md beside this file).

nhttpd on nom at each batching delay W and nhttpd on the Linux guest, under wrk "many"
(-t2 -c32) and "single" (-t1 -c1), with nomload's per-request latency and QEMU's per-request
counters (instructions, kicks, interrupts), plus rawecho's UDP round trip (the floor); one JSON
and one Markdown table under results/bench-DATE-COMMIT/.
"""
