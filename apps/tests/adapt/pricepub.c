/*
 * pricepub.c: a stand-in price publisher for the controller's in-QEMU tests (until
 * apps/priced is the one in test images). Started with the `nom.price-publisher` module flag:
 *     pricepub PRICE [PRICE@W ...]
 * publishes the first price ($/Gbit) in bulletin-board price slot 0 at once, then each next
 * one as soon as some application's board row reports batching delay W us (so the test can
 * order "the load changed W" before "the price changed"), polling the board every 20 ms.
 * Prints "pricepub: published P" after each publication; exits 0 after the last.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nom/bb.h>
#include <nom/sched.h>
#include <nom/syscall.h>
#include <nom/time.h>

#define POLL_US 20000u

static void publish(double usd, uint64_t sequence)
{
    struct nom_bb_price p = {.resource = NOM_RES_BANDWIDTH, .unit = NOM_UNIT_GBIT,
                             .price_micro = (int64_t)(usd * 1e6 + 0.5), .sequence = sequence};
    int64_t r = nom_sys_price_publish(0, &p);
    if (r != 0) {
        printf("pricepub: publish failed (%lld)\n", (long long)r);
        exit(1);
    }
    printf("pricepub: published %g\n", usd);
}

/* 1 if some other running application reports W = w_us on the board. */
static int some_app_runs_w(uint32_t w_us)
{
    struct nom_bb bb;
    nom_bb_snapshot(&bb);
    for (unsigned i = 0; i < NOM_BB_MAX_APPS; i++) {
        const struct nom_bb_app *a = &bb.apps[i];
        if (a->state == NOM_APP_RUNNING && a->id != nom_self_id() &&
            a->report.batching_delay_ns == w_us * 1000u)
            return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        printf("pricepub: usage: pricepub PRICE [PRICE@W ...]\n");
        return 2;
    }
    publish(strtod(argv[1], NULL), 1);
    for (int i = 2; i < argc; i++) {
        char *at = strchr(argv[i], '@');
        if (at == NULL) {
            printf("pricepub: %s: PRICE@W expected\n", argv[i]);
            return 2;
        }
        uint32_t w = (uint32_t)strtoul(at + 1, NULL, 10);
        while (!some_app_runs_w(w))
            nom_sleep_until(nom_tsc() + nom_us_to_tsc(POLL_US));
        publish(strtod(argv[i], NULL), (uint64_t)i);
    }
    return 0;
}
