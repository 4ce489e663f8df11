/*
 * pricepub.c: a stand-in price publisher for the controller's in-QEMU tests (until
 * apps/priced is the one in test images). Started with the `nom.price-publisher` module flag:
 *     pricepub PRICE [PRICE@W[:S] ...]
 * publishes the first price ($/Gbit) in bulletin-board price slot 0 at once, then each next
 * one as soon as some application's board row reports batching delay W us (so the test can
 * order "the load changed W" before "the price changed"), or, with :S, once one has reported
 * it for S seconds without a break (so the test knows the application chose W at the price in
 * force, not only tried it), polling the board every 20 ms.
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
        char *colon;
        uint32_t w = (uint32_t)strtoul(at + 1, &colon, 10);
        uint64_t hold = *colon == ':' ? nom_us_to_tsc(strtoul(colon + 1, NULL, 10) * 1000000ull)
                                      : 0;
        uint64_t since = 0; /* 0: W not on the board at the last poll */
        for (;;) {
            uint64_t now = nom_tsc();
            if (!some_app_runs_w(w))
                since = 0;
            else if (since == 0)
                since = now;
            if (since != 0 && now - since >= hold)
                break;
            nom_sleep_until(now + nom_us_to_tsc(POLL_US));
        }
        publish(strtod(argv[i], NULL), (uint64_t)i);
    }
    return 0;
}
