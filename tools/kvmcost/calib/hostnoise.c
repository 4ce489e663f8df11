/* hostnoise: how often, and for how long, the host takes a CPU away from a thread that never
 * gives it up (../hostnoise.py). Run pinned on the host CPU a vCPU thread is to get, it spins
 * reading one clock, the one the exit-cost QEMU makes the guest's time from (-kvmcost clock=):
 * CLOCK_MONOTONIC for clock=dilated, the thread's CPU time for clock=cpu. Any gap between two
 * consecutive reads longer than the loop's own turn is time the thread did not run its code:
 * the host kernel's timer tick and other interrupts (on a kernel without IRQ time accounting
 * they are billed to the thread, so the CPU-time clock counts them too), the hypervisor under
 * a nested host, another thread given the CPU. The guest's clock runs through such a gap while
 * the vCPU runs no guest instruction: a gap of g ns is g / D of the guest's time.
 *
 *     hostnoise SECONDS CLOCK MIN_GAP_NS      (CLOCK: wall or cpu)
 *
 * prints "hostnoise clock=C seconds=S reads=N gaps=K" and then K lines "gap NS", every gap of
 * at least MIN_GAP_NS in the order seen (at most MAX_GAPS; "gaps=" counts all of them). */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_GAPS 200000

static int64_t read_ns(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int usage(void)
{
    fprintf(stderr, "usage: hostnoise SECONDS wall|cpu MIN_GAP_NS\n");
    return 2;
}

int main(int argc, char **argv)
{
    if (argc != 4)
        return usage();
    char *end;
    double seconds = strtod(argv[1], &end);
    if (*end || !(seconds > 0 && seconds <= 600))
        return usage();
    clockid_t clock;
    if (!strcmp(argv[2], "wall"))
        clock = CLOCK_MONOTONIC;
    else if (!strcmp(argv[2], "cpu"))
        clock = CLOCK_THREAD_CPUTIME_ID;
    else
        return usage();
    long long min_gap = strtoll(argv[3], &end, 10);
    if (*end || min_gap < 1)
        return usage();

    static int64_t gaps[MAX_GAPS];
    long n_gaps = 0, reads = 0;
    /* The run's length is wall time whatever the clock: a CPU-time clock advances slower
     * than wall time only when the thread waits for its CPU, which the loop never does. */
    int64_t stop = read_ns(CLOCK_MONOTONIC) + (int64_t)(seconds * 1e9);
    int64_t last = read_ns(clock);
    for (;;) {
        int64_t now = read_ns(clock);
        reads++;
        if (now - last >= min_gap) {
            if (n_gaps < MAX_GAPS)
                gaps[n_gaps] = now - last;
            n_gaps++;
        }
        last = now;
        if ((reads & 1023) == 0 && read_ns(CLOCK_MONOTONIC) >= stop)
            break;
    }
    printf("hostnoise clock=%s seconds=%.3f reads=%ld gaps=%ld\n", argv[2], seconds, reads,
           n_gaps);
    for (long i = 0; i < n_gaps && i < MAX_GAPS; i++)
        printf("gap %lld\n", (long long)gaps[i]);
    return 0;
}
