/* nom_stats.c: memcached's `stats` on nom reports what the profit-maximizing controller acts on
 * (paper 6.5; DESIGN.md "Profit": W, price and profit rate over the application's own
 * protocol). The link wraps server_stats (-Wl,--wrap=server_stats; proto_text.c and
 * proto_bin.c call it from outside memcached.c), so memcached's sources stay unpatched: the
 * real statistics come first, then ours through the same ADD_STAT callback, text and binary. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <nom/adapt.h>
#include <nom/net.h>

/* memcached.h's callback type and server_stats (conn is opaque here). */
typedef void (*ADD_STAT)(const char *key, const uint16_t klen, const char *val,
                         const uint32_t vlen, const void *cookie);
void __real_server_stats(ADD_STAT add_stats, void *c);
void __wrap_server_stats(ADD_STAT add_stats, void *c);

static void add(ADD_STAT add_stats, void *c, const char *key, const char *val)
{
    add_stats(key, (uint16_t)strlen(key), val, (uint32_t)strlen(val), c);
}

static void add_double(ADD_STAT add_stats, void *c, const char *key, int valid, double v)
{
    char val[40];
    snprintf(val, sizeof val, "%.9g", v);
    add(add_stats, c, key, valid ? val : "none");
}

static void add_uint(ADD_STAT add_stats, void *c, const char *key, uint64_t v)
{
    char val[24];
    snprintf(val, sizeof val, "%llu", (unsigned long long)v);
    add(add_stats, c, key, val);
}

/* A list of n counts, comma-separated (the lateness histograms: nom/net.h). */
static void add_list(ADD_STAT add_stats, void *c, const char *key, const uint64_t *v, int n)
{
    char val[NOM_NET_LATE_BUCKETS * 21];
    int at = 0;
    for (int i = 0; i < n && at < (int)sizeof val; i++)
        at += snprintf(val + at, sizeof val - (size_t)at, "%s%llu", i ? "," : "",
                       (unsigned long long)v[i]);
    add(add_stats, c, key, val);
}

/* The data path's exit-causing events and how late batches were released (issue 11, item 4):
 * the lateness histograms' bucket i counts batches held longer than W by less than
 * net_late_hist_bounds_us[i] us (and at least the bound before it). */
static void add_net_stats(ADD_STAT add_stats, void *c)
{
    static const uint64_t bounds[NOM_NET_LATE_BUCKETS - 1] = NOM_NET_LATE_BOUNDS_US;
    struct nom_net_stats st;
    nom_net_stats(&st);
    add_uint(add_stats, c, "net_tx_kicks", st.tx_kicks);
    add_uint(add_stats, c, "net_rx_kicks", st.rx_kicks);
    add_uint(add_stats, c, "net_interrupts", st.interrupts);
    add_uint(add_stats, c, "net_rx_batches", st.rx_batches);
    add_uint(add_stats, c, "net_tx_batches", st.tx_batches);
    add_uint(add_stats, c, "net_arms", st.arms);
    /* Frames lost inside the guest: a client's stall of a retransmission timeout starts here. */
    add_uint(add_stats, c, "net_rx_nobuf", st.rx_nobuf);
    add_uint(add_stats, c, "net_rx_shed", st.rx_shed);
    add_uint(add_stats, c, "net_syn_dropped", st.syn_dropped);
    add_uint(add_stats, c, "net_tx_dropped", st.tx_dropped);
    add_uint(add_stats, c, "net_rx_bad", st.rx_bad);
    add_list(add_stats, c, "net_late_hist_bounds_us", bounds, NOM_NET_LATE_BUCKETS - 1);
    add_list(add_stats, c, "net_rx_late_hist", st.rx_late_hist, NOM_NET_LATE_BUCKETS);
    add_list(add_stats, c, "net_tx_late_hist", st.tx_late_hist, NOM_NET_LATE_BUCKETS);
}

void __wrap_server_stats(ADD_STAT add_stats, void *c)
{
    struct nom_adapt_status a;
    char val[24];
    __real_server_stats(add_stats, c);
    nom_adapt_status(&a);
    snprintf(val, sizeof val, "%u", (unsigned)a.w_us);
    add(add_stats, c, "batching_delay_us", val);
    add(add_stats, c, "batching_delay_adaptive", a.adaptive ? "1" : "0");
    add(add_stats, c, "utility", nom_utility_name(a.utility));
    add(add_stats, c, "load_class", nom_load_name(a.load));
    add_double(add_stats, c, "bandwidth_price_usd_per_gbit", a.has_price, a.price);
    /* priced cannot confirm the price now (abi.h NOM_PRICE_STALE): W is the safe one */
    add(add_stats, c, "bandwidth_price_stale", a.price_stale ? "1" : "0");
    add_double(add_stats, c, "bandwidth_price_stale_age_s", 1, a.price_stale_age_s);
    add_double(add_stats, c, "profit_rate_usd_per_s", a.has_rate, a.profit_rate);
    add_net_stats(add_stats, c);
}
