/* spin: a CPU-bound application that never blocks or yields. Reports its progress every
 * ~200 ms of wall time, five times; with two of them on one vCPU both must progress. */
#include "ktest.h"

int ktest_main(int argc, char **argv, struct nom_start_info *info) {
    (void)info;
    const char *name = argc > 1 ? argv[1] : "?";
    uint64_t period = kt_tsc_hz() / 5, next = kt_rdtsc() + period;
    volatile uint64_t work = 0;
    for (int report = 1; report <= 5;) {
        work++;
        if (kt_rdtsc() >= next) {
            kt_printf("spin %s: progress %d\n", name, report++);
            next += period;
        }
    }
    return 0;
}
