/* sleeper: blocks for argv[1] ms in one system call; the kernel's CPU accounting at its exit
 * shows a blocked application costs no CPU. */
#include "ktest.h"

int ktest_main(int argc, char **argv, struct nom_start_info *info) {
    (void)info;
    uint64_t ms = argc > 1 ? kt_atou(argv[1]) : 2000;
    uint64_t t0 = kt_rdtsc();
    kt_sleep_ms(ms);
    kt_printf("sleeper: slept %lu ms\n", (kt_rdtsc() - t0) / (kt_tsc_hz() / 1000));
    return 0;
}
