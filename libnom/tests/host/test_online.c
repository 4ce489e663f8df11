/* test_online.c: the controller's online mode (src/profit/online.c) on a synthetic server:
 * windows of counters become the learner's samples (Little's law for latency), idle windows
 * teach nothing, nor windows whose load the detector doubts, and a price change moves W both
 * ways under the refund utility. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "profit/online.h"
#include "check.h"

#define WINDOW_S 0.5
#define BYTES_PER_REQ 1100.0

/* One closed-loop user: each request takes 300 us plus 15 us per us of W, so throughput
 * falls and latency grows with W; an idle poll budget (the second knob) of 16 turns saves
 * 100 us a request, 1 turn costs 50 (0: the default, neither). */
static struct nom_adapt_counters serve_knob(struct nom_adapt_counters c, uint32_t w_us,
                                            uint32_t turns, unsigned users)
{
    double latency_us = 300 + 15.0 * w_us + (turns == 16 ? -100 : turns == 1 ? 50 : 0);
    double requests = users * WINDOW_S * 1e6 / latency_us;
    c.rx_packets += (uint64_t)llround(requests);
    c.tx_bytes += (uint64_t)llround(requests * BYTES_PER_REQ);
    c.exits += (uint64_t)llround(requests * (w_us ? 1.0 : 3.0));
    return c;
}

static struct nom_adapt_counters serve(struct nom_adapt_counters c, uint32_t w_us,
                                       unsigned users)
{
    return serve_knob(c, w_us, 0, users);
}

/* Does a window's sample say what the server did, and does an idle window say nothing? */
static int counters_become_a_sample(void)
{
    struct nom_adapt_counters a = {0}, b = serve(a, 20, 1);
    struct nom_learn_sample s;
    EXPECT(adapt_online_sample(&a, &b, WINDOW_S, 1, &s) == 0);
    EXPECT(fabs(s.latency_us - 600) < 1); /* 300 + 15 x 20 us, by Little's law */
    EXPECT(fabs(s.ops_per_s - 1e6 / 600) < 2);
    EXPECT(fabs(s.t_gbps - 1e6 / 600 * BYTES_PER_REQ * 8 / 1e9) < 1e-5);
    EXPECT(fabs(s.exits_per_req - 1) < 1e-9 && s.jitter_us == s.latency_us);
    b = a;
    b.rx_packets += ADAPT_ONLINE_MIN_PACKETS - 1;
    EXPECT(adapt_online_sample(&a, &b, WINDOW_S, 1, &s) == -EAGAIN); /* idle */
    EXPECT(adapt_online_sample(&a, &b, WINDOW_S, 0, &s) == -EAGAIN); /* no connection */
    EXPECT(adapt_online_sample(&a, &b, 0, 1, &s) == -EAGAIN);
    return 1;
}

/* Is the jitter the residences' relative spread applied to Little's latency, and the
 * exponential's (the latency) when too few requests were timed? */
static int residence_spread_is_the_jitter(void)
{
    struct nom_adapt_counters a = {.requests_timed = 7, .residence_us_sum = 1e9,
                                   .residence_us_sq_sum = 1e15};
    struct nom_adapt_counters b = serve(a, 20, 1);
    struct nom_learn_sample s;
    /* 500 requests at 100 us and 500 at 300 us: mean 200, deviation 100, half the mean */
    b.requests_timed += 1000;
    b.residence_us_sum += 500 * 100.0 + 500 * 300.0;
    b.residence_us_sq_sum += 500 * 1e4 + 500 * 9e4;
    EXPECT(adapt_online_sample(&a, &b, WINDOW_S, 1, &s) == 0);
    EXPECT(fabs(s.latency_us - 600) < 1 && fabs(s.jitter_us - s.latency_us / 2) < 1e-6);
    /* all alike: no spread */
    b = serve(a, 20, 1);
    b.requests_timed += 100;
    b.residence_us_sum += 100 * 50.0;
    b.residence_us_sq_sum += 100 * 2500.0;
    EXPECT(adapt_online_sample(&a, &b, WINDOW_S, 1, &s) == 0 && fabs(s.jitter_us) < 1e-3);
    /* too few timed: the exponential's */
    b = serve(a, 20, 1);
    b.requests_timed += ADAPT_ONLINE_MIN_TIMED - 1;
    b.residence_us_sum += 19 * 100.0;
    b.residence_us_sq_sum += 19 * 1e4;
    EXPECT(adapt_online_sample(&a, &b, WINDOW_S, 1, &s) == 0 && s.jitter_us == s.latency_us);
    return 1;
}

static struct adapt_online on;
static struct nom_adapt_counters now;

/* Runs n windows at price; returns the W in force at the end. */
static uint32_t windows(int n, double price, uint32_t w)
{
    for (int k = 0; k < n; k++) {
        int explore, has_rate, changed = price != on.price;
        double rate;
        on.price = price;
        now = serve(now, w, 1);
        w = adapt_online_window(&on, &now, WINDOW_S, 1, NOM_LOAD_SINGLE, 1, changed, &explore,
                                &rate, &has_rate);
    }
    return w;
}

static uint32_t greedy_w(void)
{
    double u;
    int best = nom_learn_best(&on.learn, &u);
    return best >= 0 ? on.learn.cfg.arms[best].w_us : 9999;
}

/* Under refund, at 1 $/Gbit the fastest W earns most; at 100000 $/Gbit the bandwidth bill
 * dominates and the slowest W loses least. Does the price move W there and back, learned
 * from the counters alone (no profile)? */
static int price_moves_w_both_ways(void)
{
    char why[200] = "";
    now = (struct nom_adapt_counters){0};
    EXPECT(adapt_online_start(&on, NULL, "memcached", NOM_UTILITY_REFUND, NOM_LOAD_SINGLE, 0,
                              NULL, 0, NULL, 0, &now, why, sizeof why) == 1);
    EXPECT(strstr(why, "no offline profile") != NULL);
    EXPECT(on.learn.cfg.narms == 6 && on.learn.cfg.arms[5].w_us == 40); /* default grid */
    uint32_t w = windows(30, 1, 0);
    EXPECT(greedy_w() == 0 && w == 0);
    w = windows(12, 1e5, w);
    EXPECT(greedy_w() == 40 && w == 40);
    w = windows(12, 1, w);
    EXPECT(greedy_w() == 0 && w == 0);
    return 1;
}

/* --adapt-grid: is the caller's grid the learner's (not the default one), and does a price
 * change move W at the first window that sees it (the estimates re-scored, no hysteresis)? */
static int callers_grid_and_one_window_retarget(void)
{
    static const uint32_t grid[] = {0, 1000};
    char why[200];
    now = (struct nom_adapt_counters){0};
    EXPECT(adapt_online_start(&on, NULL, "memcached", NOM_UTILITY_REFUND, NOM_LOAD_SINGLE, 0,
                              grid, 2, NULL, 0, &now, why, sizeof why) == 1);
    EXPECT(on.learn.cfg.narms == 2 && on.learn.cfg.arms[1].w_us == 1000);
    uint32_t w = windows(12, 1e5, 0);
    EXPECT(greedy_w() == 1000 && w == 1000);
    EXPECT(windows(1, 1, w) == 0);
    return 1;
}

/* While the controller holds W for a reason of its own (a stale price), are the held windows
 * kept out of the estimates, and does learning resume on the W in force? */
static int held_windows_teach_nothing(void)
{
    char why[200];
    now = (struct nom_adapt_counters){0};
    EXPECT(adapt_online_start(&on, NULL, "memcached", NOM_UTILITY_REFUND, NOM_LOAD_SINGLE, 0,
                              NULL, 0, NULL, 0, &now, why, sizeof why) == 1);
    now = serve(now, 0, 1);
    adapt_online_hold(&on, &now, 7); /* off the grid */
    EXPECT(on.arm == -1);
    int explore, has_rate;
    double rate;
    now = serve(now, 7, 1);
    on.price = 1;
    adapt_online_window(&on, &now, WINDOW_S, 1, NOM_LOAD_SINGLE, 1, 0, &explore, &rate,
                        &has_rate);
    struct nom_learn_estimate e;
    for (int i = 0; i < (int)on.learn.cfg.narms; i++)
        EXPECT(nom_learn_estimate(&on.learn, i, &e) == 0 && e.weight == 0);
    adapt_online_hold(&on, &now, 0); /* the safe W is on the grid: learned from again */
    EXPECT(on.arm == 0);
    now = serve(now, 0, 1);
    adapt_online_window(&on, &now, WINDOW_S, 1, NOM_LOAD_SINGLE, 1, 0, &explore, &rate,
                        &has_rate);
    EXPECT(nom_learn_estimate(&on.learn, 0, &e) == 0 && e.weight == 1);
    return 1;
}

/* A window whose load the detector doubts (its last vote was for the other class, not yet
 * confirmed, or in the dead band) measured another load than its class's: is it kept out of
 * the estimates, and is the next settled window learned from? */
static int doubted_windows_teach_nothing(void)
{
    char why[200];
    struct nom_load_meter m;
    nom_load_meter_init(&m, NOM_LOAD_SINGLE);
    EXPECT(nom_load_meter_settled(&m));
    now = (struct nom_adapt_counters){0};
    EXPECT(adapt_online_start(&on, NULL, "memcached", NOM_UTILITY_REFUND, NOM_LOAD_SINGLE, 0,
                              NULL, 0, NULL, 0, &now, why, sizeof why) == 1);
    int explore, has_rate;
    double rate;
    on.price = 1;
    static const unsigned doubted[] = {32, 2}; /* a first "many" vote; the dead band */
    for (int k = 0; k < 2; k++) {
        nom_load_meter_sample(&m, doubted[k]);
        EXPECT(m.cls == NOM_LOAD_SINGLE && !nom_load_meter_settled(&m));
        now = serve(now, 0, doubted[k]);
        adapt_online_window(&on, &now, WINDOW_S, doubted[k], m.cls, nom_load_meter_settled(&m),
                            0, &explore, &rate, &has_rate);
    }
    struct nom_learn_estimate e;
    for (int i = 0; i < (int)on.learn.cfg.narms; i++)
        EXPECT(nom_learn_estimate(&on.learn, i, &e) == 0 && e.weight == 0);
    nom_load_meter_sample(&m, 1);
    EXPECT(nom_load_meter_settled(&m));
    now = serve(now, on.learn.cfg.arms[on.arm].w_us, 1);
    adapt_online_window(&on, &now, WINDOW_S, 1, m.cls, 1, 0, &explore, &rate, &has_rate);
    EXPECT(nom_learn_estimate(&on.learn, 0, &e) == 0 && e.weight == 1);
    return 1;
}

/* With the idle poll budget as a second knob (--adapt-knob=idle-poll: every W at the default,
 * 1 and 16 turns), does the learner find the best pair, W = 0 with 16 turns, within 60
 * windows, and are a knob value of 0 and too many settings refused? */
static int knob_is_learned_with_w(void)
{
    static const uint32_t turns[] = {1, 16}, bad[] = {0}, many[] = {1, 2, 3, 4, 5};
    char why[200];
    now = (struct nom_adapt_counters){0};
    EXPECT(adapt_online_start(&on, NULL, "memcached", NOM_UTILITY_REFUND, NOM_LOAD_SINGLE, 0,
                              NULL, 0, turns, 2, &now, why, sizeof why) == 1);
    EXPECT(on.learn.cfg.narms == 18 && adapt_online_knob(&on) == 0);
    uint32_t w = 0, knob = 0;
    on.price = 1;
    for (int k = 0; k < 60; k++) {
        int explore, has_rate;
        double rate;
        now = serve_knob(now, w, knob, 1);
        w = adapt_online_window(&on, &now, WINDOW_S, 1, NOM_LOAD_SINGLE, 1, 0, &explore, &rate,
                                &has_rate);
        knob = adapt_online_knob(&on);
    }
    double u;
    int best = nom_learn_best(&on.learn, &u);
    EXPECT(best >= 0 && on.learn.cfg.arms[best].w_us == 0 && on.learn.cfg.arms[best].knob == 16);
    EXPECT(w == 0 && knob == 16);
    EXPECT(adapt_online_start(&on, NULL, "m", NOM_UTILITY_REFUND, NOM_LOAD_SINGLE, 0, NULL, 0,
                              bad, 1, &now, why, sizeof why) == -EINVAL);
    EXPECT(adapt_online_start(&on, NULL, "m", NOM_UTILITY_REFUND, NOM_LOAD_SINGLE, 0, NULL, 0,
                              many, 5, &now, why, sizeof why) == -EINVAL);
    return 1;
}

/* The W values the controller counts before it starts (check_grid) are the ones the learner
 * takes: the caller's grid, else a valid profile's, else the default grid. A profile of 11 W
 * values with the two idle poll budgets is 33 settings, which the learner refuses. */
static int w_count_is_the_learners_grid(void)
{
    static struct nom_adapt_point many[11], single[11];
    for (unsigned i = 0; i < 11; i++) {
        many[i] = (struct nom_adapt_point){4 * i, 1.0, 1e4, 100 + i, 20};
        single[i] = (struct nom_adapt_point){4 * i, 0.2, 2e3, 50 + 10 * i, 10};
    }
    const struct nom_adapt_profile eleven = {"m", "test", 11, {many, single}};
    const uint32_t grid[] = {0, 1000}, knobs[] = ADAPT_ONLINE_IDLE_POLL_US;
    const uint32_t fallback[] = ADAPT_ONLINE_DEFAULT_W;
    struct nom_adapt_counters now = {0};
    struct adapt_online on;
    char why[160];
    EXPECT(adapt_online_w_count(&eleven, NULL, 0) == 11);
    EXPECT(adapt_online_w_count(&eleven, grid, 2) == 2);
    EXPECT(adapt_online_w_count(NULL, NULL, 0) == sizeof fallback / sizeof fallback[0]);
    EXPECT(adapt_online_start(&on, &eleven, "m", NOM_UTILITY_REFUND, NOM_LOAD_SINGLE, 0, NULL, 0,
                              knobs, 2, &now, why, sizeof why) == -EINVAL);
    EXPECT(adapt_online_start(&on, &eleven, "m", NOM_UTILITY_REFUND, NOM_LOAD_SINGLE, 0, NULL, 0,
                              NULL, 0, &now, why, sizeof why) == 0);
    EXPECT(on.learn.cfg.narms == 11);
    return 1;
}

int main(void)
{
    RUN(counters_become_a_sample);
    RUN(residence_spread_is_the_jitter);
    RUN(price_moves_w_both_ways);
    RUN(callers_grid_and_one_window_retarget);
    RUN(held_windows_teach_nothing);
    RUN(doubted_windows_teach_nothing);
    RUN(knob_is_learned_with_w);
    RUN(w_count_is_the_learners_grid);
    return failures != 0;
}
