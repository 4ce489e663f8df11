/* platform_linux.c: nhttpd on Linux (platform.h), for the comparison guest and host tests.
 * Linux has no batching delay and no price: /nom/stats reports them as null. */
#include "platform.h"

#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>

#include "json.h"

int platform_start(int *argc, char **argv)
{
    struct rlimit rl;
    (void)argc;
    (void)argv;
    /* A peer that resets mid-response must cost an EPIPE, not the process. */
    signal(SIGPIPE, SIG_IGN);
    /* Many thousands of connections need as many descriptors as the hard limit allows. */
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
            perror("nhttpd: setrlimit(RLIMIT_NOFILE)");
    }
    return 0;
}

uint64_t platform_ticks(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t platform_ticks_per_sec(void) { return 1000000000u; }

void platform_stats_json(struct json *j)
{
    json_string(j, "platform", "linux");
    json_null(j, "batching_delay_us");
    json_null(j, "bandwidth_price_usd_per_gbit");
}

void platform_board_json(struct json *j)
{
    json_string(j, "platform", "linux");
    json_null(j, "board");
}
