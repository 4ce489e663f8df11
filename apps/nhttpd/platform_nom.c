/* platform_nom.c: nhttpd on nom (platform.h): the application's private network stack
 * (net/, nom/net.h), time from the TSC (nom/time.h), the bandwidth price from the bulletin
 * board (paper 3.7), the driver's counters in /nom/stats and the board's export in /nom/board.
 * The only nom-specific file. */
#include "platform.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <nom/adapt.h>
#include <nom/bb.h>
#include <nom/net.h>
#include <nom/price.h>
#include <nom/time.h>

#include "json.h"

/* The profit-maximizing controller (libnom's nom/adapt.h, paper 6.5) with nhttpd's profile;
 * it takes --utility=, --adapt and --adapt-mode= out of argv (--batching-delay= is net/'s, which
 * hands it to the controller: W fixed). */
static int start_controller(int *argc, char **argv)
{
    int r = nom_adapt_start(argc, argv, &nom_adapt_profile);
    if (r != 0)
        fprintf(stderr, "nhttpd: cannot start the controller: %s\n", strerror(-r));
    return r == 0 ? 0 : -1;
}

int platform_start(int *argc, char **argv)
{
    int r = nom_net_start(argc, argv);
    if (r == -ETIMEDOUT) {
        /* No DHCP lease yet; the stack keeps trying and the listener works once it has one. */
        fprintf(stderr, "nhttpd: no address yet (DHCP timed out); serving when one arrives\n");
        return start_controller(argc, argv);
    }
    if (r != 0) {
        fprintf(stderr, "nhttpd: cannot start the network: %s\n", strerror(-r));
        return -1;
    }
    return start_controller(argc, argv);
}

uint64_t platform_ticks(void) { return nom_tsc(); }

uint64_t platform_ticks_per_sec(void) { return nom_tsc_hz(); }

/* The bandwidth price priced published on the bulletin board, if any, in $/Gbit (read
 * consistently by priced's subscriber library, nom/price.h). */
static bool bandwidth_price(double *usd_per_gbit)
{
    struct nom_price p;
    if (nom_price_bandwidth(&p) != 0)
        return false;
    *usd_per_gbit = p.usd_per_gbit;
    return true;
}

/* The driver's and netif's counters (nom/net.h), all uint64_t, under their own names. */
#define COUNTER(name) {#name, offsetof(struct nom_net_stats, name)}
static const struct {
    const char *name;
    size_t offset;
} driver_counters[] = {
    COUNTER(rx_packets),   COUNTER(rx_bytes),    COUNTER(rx_batches),       COUNTER(tx_packets),
    COUNTER(tx_bytes),     COUNTER(tx_batches),  COUNTER(tx_kicks),         COUNTER(rx_kicks),
    COUNTER(kicks_suppressed), COUNTER(interrupts), COUNTER(polls),         COUNTER(empty_polls),
    COUNTER(arms),         COUNTER(arm_races),   COUNTER(tx_ring_full),     COUNTER(rx_hold_full),
    COUNTER(rx_bad),       COUNTER(tx_bad),      COUNTER(rx_nobuf),         COUNTER(tx_dropped),
    COUNTER(tx_gathers),   COUNTER(syn_dropped), COUNTER(rx_shed),          COUNTER(rx_pool_peak),
    COUNTER(acks_batched), COUNTER(rx_drained),
};

static void driver_json(struct json *j, const struct nom_net_stats *st)
{
    json_object_begin(j, "driver");
    for (size_t i = 0; i < sizeof driver_counters / sizeof driver_counters[0]; i++) {
        uint64_t v;
        memcpy(&v, (const char *)st + driver_counters[i].offset, sizeof v);
        json_uint(j, driver_counters[i].name, v);
    }
    json_object_end(j);
}

/* The controller's state (nom/adapt.h): utility, load class, expected profit rate. */
static void adapt_json(struct json *j, const struct nom_adapt_status *a)
{
    json_object_begin(j, "adapt");
    json_string(j, "utility", nom_utility_name(a->utility));
    json_string(j, "load_class", nom_load_name(a->load));
    json_uint(j, "active_connections", a->active_conns);
    /* Micro-dollars, as on the board: json_double's three decimals would lose TCG's rates. */
    if (a->has_rate)
        json_int(j, "expected_profit_micro_usd_per_s", llround(a->profit_rate * 1e6));
    else
        json_null(j, "expected_profit_micro_usd_per_s");
    /* priced cannot confirm the price now (abi.h NOM_PRICE_STALE): W is the safe one. */
    json_bool(j, "price_stale", a->price_stale);
    json_double(j, "price_stale_age_s", a->price_stale_age_s);
    json_uint(j, "decisions", a->decisions);
    json_uint(j, "w_changes", a->w_changes);
    json_object_end(j);
}

void platform_stats_json(struct json *j)
{
    struct nom_net_stats st;
    struct nom_adapt_status a;
    double price;
    nom_adapt_status(&a);
    json_string(j, "platform", "nom");
    json_uint(j, "batching_delay_us", nom_net_batching_delay_us());
    json_bool(j, "batching_delay_fixed", !a.adaptive);
    adapt_json(j, &a);
    if (bandwidth_price(&price))
        json_double(j, "bandwidth_price_usd_per_gbit", price);
    else
        json_null(j, "bandwidth_price_usd_per_gbit");
    nom_net_stats(&st);
    driver_json(j, &st);
}

/* One price slot in use: resource, unit and price as the kernel holds them (micro-dollars). */
static void board_price_json(struct json *j, unsigned slot, const struct nom_bb_price *p)
{
    char key[12];
    snprintf(key, sizeof key, "%u", slot);
    json_object_begin(j, key);
    json_uint(j, "resource", p->resource);
    json_uint(j, "unit", p->unit);
    json_int(j, "price_micro", p->price_micro);
    json_uint(j, "timestamp_ns", p->timestamp_ns);
    json_uint(j, "sequence", p->sequence);
    json_uint(j, "flags", p->flags);
    json_uint(j, "stale_since_tsc", p->stale_since_tsc);
    json_object_end(j);
}

/* One application row with what it reports about itself (struct nom_bb_app_report). */
static void board_app_json(struct json *j, const struct nom_bb_app *a)
{
    char key[12];
    snprintf(key, sizeof key, "%u", a->id);
    json_object_begin(j, key);
    json_string(j, "name", a->name);
    json_uint(j, "state", a->state);
    json_uint(j, "cores", a->cores);
    json_uint(j, "mem_pages", a->mem_pages);
    json_uint(j, "cpu_ns", a->cpu_ns);
    json_uint(j, "batching_delay_ns", a->report.batching_delay_ns);
    json_int(j, "price_seen_micro", a->report.price_seen_micro);
    json_int(j, "profit_rate_micro", a->report.profit_rate_micro);
    json_object_end(j);
}

void platform_board_json(struct json *j)
{
    /* Static: 16 KiB is too much for a stack frame, and nhttpd answers on one thread. */
    static struct nom_bb bb;
    uint64_t generation = nom_bb_snapshot(&bb);
    json_string(j, "platform", "nom");
    json_object_begin(j, "board");
    json_uint(j, "generation", generation);
    json_uint(j, "boot_unix_ns", bb.boot_unix_ns);
    json_uint(j, "ncpus", bb.ncpus);
    json_uint(j, "mem_total_bytes", bb.mem_total_bytes);
    json_uint(j, "mem_free_bytes", bb.mem_free_bytes);
    json_object_begin(j, "prices");
    for (unsigned i = 0; i < NOM_BB_MAX_PRICES; i++)
        if (bb.prices[i].resource != 0)
            board_price_json(j, i, &bb.prices[i]);
    json_object_end(j);
    json_object_begin(j, "apps");
    for (unsigned i = 0; i < bb.napps && i < NOM_BB_MAX_APPS; i++)
        if (bb.apps[i].state != NOM_APP_EMPTY)
            board_app_json(j, &bb.apps[i]);
    json_object_end(j);
    json_object_end(j);
}
