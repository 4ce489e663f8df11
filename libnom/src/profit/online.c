/* online.c: the controller's online mode (online.h): windows of the stack's counters turned
 * into the learner's samples, and the learner's choice turned into the next W. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "online.h"

/* The learner's score: the application's utility at the price the controller keeps. */
static int score(const struct nom_learn_sample *e, void *ctx, double *u)
{
    const struct adapt_online *o = ctx;
    return nom_utility(o->kind, &o->params, e->t_gbps, e->latency_us, e->jitter_us, o->price,
                       u);
}

/* The W values: the caller's (nw > 0), else the profile's when it is valid, else the default
 * grid. */
static unsigned w_grid_of(const struct nom_adapt_profile *prof, const uint32_t *grid,
                          unsigned nw, uint32_t *w)
{
    static const uint32_t fallback[] = ADAPT_ONLINE_DEFAULT_W;
    char why[160];
    if (nw > 0 && nw <= NOM_LEARN_MAX_ARMS) {
        memcpy(w, grid, nw * sizeof *w);
        return nw;
    }
    if (prof != NULL && nom_adapt_profile_check(prof, why, sizeof why) == 0 &&
        prof->npoints <= NOM_LEARN_MAX_ARMS) {
        for (unsigned i = 0; i < prof->npoints; i++)
            w[i] = prof->points[NOM_LOAD_MANY][i].w_us;
        return prof->npoints;
    }
    memcpy(w, fallback, sizeof fallback);
    return sizeof fallback / sizeof fallback[0];
}

unsigned adapt_online_w_count(const struct nom_adapt_profile *prof, const uint32_t *grid,
                              unsigned ngrid)
{
    uint32_t w[NOM_LEARN_MAX_ARMS];
    return w_grid_of(prof, grid, ngrid, w);
}

/* The settings: every W with knob 0 first (the profile's points), then with each knob value;
 * 0 if they would be more than NOM_LEARN_MAX_ARMS or a knob value is 0. */
static unsigned grid_of(const struct nom_adapt_profile *prof, const uint32_t *grid,
                        unsigned ngrid, const uint32_t *knobs, unsigned nknobs,
                        struct nom_learn_arm_key *keys)
{
    uint32_t w[NOM_LEARN_MAX_ARMS];
    unsigned nw = w_grid_of(prof, grid, ngrid, w), n = 0;
    if (nw * (nknobs + 1) > NOM_LEARN_MAX_ARMS)
        return 0;
    for (unsigned k = 0; k <= nknobs; k++) {
        if (k > 0 && knobs[k - 1] == 0)
            return 0;
        for (unsigned i = 0; i < nw; i++)
            keys[n++] = (struct nom_learn_arm_key){w[i], k ? knobs[k - 1] : 0};
    }
    return n;
}

int adapt_online_start(struct adapt_online *o, const struct nom_adapt_profile *prof,
                       const char *app, enum nom_utility_kind kind, enum nom_load_class cls,
                       uint32_t w_now, const uint32_t *grid, unsigned ngrid,
                       const uint32_t *knobs, unsigned nknobs,
                       const struct nom_adapt_counters *now, char *why, size_t cap)
{
    struct nom_learn_arm_key keys[NOM_LEARN_MAX_ARMS];
    struct nom_learn_config cfg;
    unsigned n = grid_of(prof, grid, ngrid, knobs, nknobs, keys);
    memset(o, 0, sizeof *o);
    o->kind = kind;
    o->params = nom_utility_defaults();
    o->last = *now;
    if (nom_learn_config_default(&cfg, keys, n) != 0 ||
        nom_learn_init(&o->learn, &cfg, score, o, cls) != 0)
        return -EINVAL;
    o->arm = 0; /* the setting closest to the W in force, with the knob's default */
    for (unsigned i = 1; i < n && keys[i].knob == 0; i++) {
        if (labs((long)keys[i].w_us - (long)w_now) < labs((long)keys[o->arm].w_us - (long)w_now))
            o->arm = (int)i;
    }
    return nom_learn_seed_profile(&o->learn, prof, app, why, cap) == 0 ? 0 : 1;
}

/* The window's jitter (standard deviation of latency) for a mean latency of latency_us: the
 * spread of the requests' residence in the server (nom/adapt.h's counters), relative to its
 * mean, applied to the whole latency; an exponential's (the mean itself) when the stack timed
 * too few requests. Why relative: the server sees only its own part of a request's latency
 * (not the device's ring, the network, the client), and closed-loop users see a latency made
 * mostly of waiting for the others' requests, which the residence holds. The exponential
 * overstated it: memcached's 32 memaslap users saw 500-650 us of deviation around 900-1,000
 * us raw (results/2026-11-26-memcached-4c69e84, figures.csv), not 900-1,000; at the
 * penalty's cliff (X = 100 makes a 1% chance of missing the SLO cost all revenue) that put the
 * estimates of "many" on the edge, where a window a little slower earned nothing and a W that
 * served less looked best (U = -T P), which moved W among 0-40 on noise. */
static double jitter_of(const struct nom_adapt_counters *start,
                        const struct nom_adapt_counters *end, double latency_us)
{
    uint64_t n = end->requests_timed - start->requests_timed;
    if (n < ADAPT_ONLINE_MIN_TIMED)
        return latency_us;
    double mean = (end->residence_us_sum - start->residence_us_sum) / (double)n;
    double sq = (end->residence_us_sq_sum - start->residence_us_sq_sum) / (double)n;
    double var = sq - mean * mean;
    if (!(mean > 0) || !isfinite(var))
        return latency_us;
    return latency_us * (var > 0 ? sqrt(var) : 0) / mean;
}

int adapt_online_sample(const struct nom_adapt_counters *start,
                        const struct nom_adapt_counters *end, double seconds, unsigned conns,
                        struct nom_learn_sample *out)
{
    uint64_t packets = end->rx_packets - start->rx_packets;
    if (!(seconds > 0) || packets < ADAPT_ONLINE_MIN_PACKETS || conns == 0)
        return -EAGAIN;
    double rps = packets / seconds;
    double latency_us = conns / rps * 1e6; /* Little's law, closed-loop users */
    *out = (struct nom_learn_sample){
        .t_gbps = (end->tx_bytes - start->tx_bytes) * 8 / seconds / 1e9,
        .ops_per_s = rps,
        .latency_us = latency_us,
        .jitter_us = jitter_of(start, end, latency_us),
        .exits_per_req = (double)(end->exits - start->exits) / packets,
    };
    return 0;
}

uint32_t adapt_online_window(struct adapt_online *o, const struct nom_adapt_counters *now,
                             double seconds, unsigned conns, enum nom_load_class cls,
                             int settled, int price_changed, int *explore, double *rate,
                             int *has_rate)
{
    struct nom_learn_sample s;
    int busy = adapt_online_sample(&o->last, now, seconds, conns, &s) == 0;
    o->last = *now;
    /* Neither a window across a class change nor one whose load the detector doubts: a
     * "many" window learned as "single" (the votes lag the load by NOM_ADAPT_VOTES windows)
     * once made memcached's single table prefer W=10 for a whole phase (results/
     * 2026-11-26-b77589b, adaptive-online run 1: 15.7K KVM-eq. ops/s against W=0's 28.4K). */
    if (busy && settled && cls == o->learn.cls && o->arm >= 0)
        nom_learn_observe(&o->learn, o->arm, &s);
    nom_learn_set_class(&o->learn, cls);
    if (price_changed)
        nom_learn_retarget(&o->learn);
    if (busy || price_changed) { /* idle: nothing to learn from, W stays */
        uint64_t before = o->learn.explorations;
        o->arm = nom_learn_next(&o->learn);
        *explore = o->learn.explorations != before;
    } else {
        *explore = 0;
    }
    *has_rate = nom_learn_best(&o->learn, rate) >= 0;
    if (!*has_rate)
        *rate = 0;
    return o->learn.cfg.arms[o->arm].w_us;
}

uint32_t adapt_online_knob(const struct adapt_online *o)
{
    return o->arm >= 0 ? o->learn.cfg.arms[o->arm].knob : 0;
}

void adapt_online_hold(struct adapt_online *o, const struct nom_adapt_counters *now,
                       uint32_t w_us)
{
    o->last = *now;
    o->arm = -1;
    for (unsigned i = 0; i < o->learn.cfg.narms; i++) {
        if (o->learn.cfg.arms[i].w_us == w_us && o->learn.cfg.arms[i].knob == 0)
            o->arm = (int)i;
    }
}
