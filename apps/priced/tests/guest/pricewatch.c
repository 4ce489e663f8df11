/* pricewatch.c: a subscriber of priced's prices for the tests (tests/test_priced.py), using
 * only nom/price.h. It subscribes, then prints one line per publication it wakes up for:
 *     pricewatch: price 10.000000 $/Gbit sequence 2 at 12.345678 s (notifications 2,
 *     callback 2 saw 10000000; priced cpu 35 ms) stale 0
 * and exits 0 after --changes=N publications, 1 if --timeout-s=S pass first. The callback
 * (scheduler context) only counts; the main thread waits in nom_price_wait(). Each line ends
 * with the CPU time priced has used so far (its board row), for measure.py. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nom/bb.h>
#include <nom/price.h>
#include <nom/time.h>

static volatile uint64_t callbacks;
static volatile int64_t callback_price;

static void on_change(const struct nom_price *now, void *arg)
{
    (void)arg;
    callbacks++;
    callback_price = now->micro_per_gbit;
}

/* CPU time (ms) of the first application named name on the board, -1 if there is none:
 * measure.py reads priced's cost from it. */
static long long cpu_ms_of(const char *name)
{
    struct nom_bb_app row;
    for (uint32_t id = 1; id <= NOM_BB_MAX_APPS; id++)
        if (nom_bb_app(id, &row) == 0 && strncmp(row.name, name, sizeof row.name) == 0)
            return (long long)(row.cpu_ns / 1000000);
    return -1;
}

static long option(int argc, char **argv, const char *name, long fallback)
{
    size_t n = strlen(name);
    for (int i = 1; i < argc; i++)
        if (strncmp(argv[i], name, n) == 0)
            return strtol(argv[i] + n, NULL, 10);
    return fallback;
}

int main(int argc, char **argv)
{
    long changes = option(argc, argv, "--changes=", 1000000);
    long timeout_s = option(argc, argv, "--timeout-s=", 3600);
    struct nom_price p = {0};
    setvbuf(stdout, NULL, _IOLBF, 0);
    int r = nom_price_subscribe(on_change, NULL);
    int have = nom_price_bandwidth(&p) == 0;
    printf("pricewatch: subscribed (%d); price now %s\n", r, have ? "published" : "none");
    uint64_t deadline = nom_tsc() + nom_us_to_tsc((uint64_t)timeout_s * 1000000);
    for (long seen = 0; seen < changes; seen++) {
        if (nom_price_wait(have ? p.sequence : 0, deadline, &p) != 0) {
            printf("pricewatch: timed out after %ld changes\n", seen);
            return 1;
        }
        have = 1;
        printf("pricewatch: price %.6f $/Gbit sequence %llu at %.6f s (notifications %llu, "
               "callback %llu saw %lld; priced cpu %lld ms) stale %d\n", p.usd_per_gbit,
               (unsigned long long)p.sequence, (double)nom_now_ns() / 1e9,
               (unsigned long long)nom_price_notifications(), (unsigned long long)callbacks,
               (long long)callback_price, cpu_ms_of("priced"), p.stale);
    }
    return 0;
}
