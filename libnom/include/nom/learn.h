/*
 * nom/learn.h: the online learner of the batching controller (issue 12): it estimates, while
 * the application serves, what each setting of the data path (a batching delay W, or a tuple
 * of W and another knob: --adapt-knob=idle-poll, nom/adapt.h) gives in throughput, latency,
 * jitter and exits per request, and picks the setting that maximizes the application's utility at the current price and load.
 * It is pure C (no I/O, no nom dependency beyond nom/adapt.h's types), host-tested.
 *
 * Contract. The caller owns time: it runs the setting nom_learn_next() names for one window
 * (the controller's sample period), measures that window into a struct nom_learn_sample and
 * gives it to nom_learn_observe(), then asks nom_learn_next() again. The utility is the
 * caller's: a score function over an estimate (T, L, J, exits); the learner calls it whenever
 * it compares settings, so a new price or utility takes effect at the next nom_learn_next()
 * (nom_learn_retarget() drops the old utility's hysteresis). Estimates are kept per load class;
 * nom_learn_set_class() switches the table in use (the load detector below decides the
 * class). A profile measured offline seeds the tables (nom_learn_seed_profile); without one,
 * or with a bad one (refused with a one-line reason), the learner starts empty and explores.
 *
 * Method: discounted UCB (Garivier and Moulines, "On upper-confidence bound policies for
 * switching bandit problems", 2011) over the grid of settings, with a token bucket bounding
 * exploration. Why: the grid is small and discrete (6 to 16 settings), the response surface
 * moves (price, load, machine), and decisions run in the scheduler context of the guest:
 * D-UCB is deterministic (reproducible, no random numbers in the guest), costs a few dozen
 * floating-point operations per window, and its discount forgets old samples at a stated
 * rate, which a Gaussian-process optimizer or a one-shot successive halving do not. The
 * utility is a nonlinear function of the means (the penalty's erfc), so the optimistic index
 * of a setting is the best score over the corners of its confidence box (mean T and mean L,
 * each +- its standard error times sqrt(ucb_c ln N)), not a bonus added to a mean utility.
 * Plain UCB explores forever at a logarithmic rate, which on a flat surface is thrashing;
 * the budget makes it explicit instead:
 *
 *   Budget. A window runs a setting other than the greedy one only by spending a token.
 *   Tokens accrue at explore_share per window (default 0.05: at most 1 window in 20 off the
 *   greedy setting in the long run) up to explore_burst (default: the number of settings,
 *   enough for one sweep); nom_learn_init, nom_learn_set_class and a detected change refill
 *   the bucket, a price change does not (the estimates still hold, they are scored anew). So
 *   after a change of load at most explore_burst windows explore at once, and W changes at
 *   most 2 * explore_share of the windows once the bucket is empty. The greedy
 *   setting itself moves only when another one is better by more than one standard error of
 *   the difference (hysteresis against noise), ties keep the setting in use.
 *
 *   Unimodality. Profit is taken to rise with W to one peak and fall after it, per knob
 *   value (the paper's profiles and ours). A setting is not explored while some measured W
 *   below it earns less than a smaller measured W by more than two standard errors of their
 *   difference (the peak lies below: every larger W earns less still): a sweep on a surface
 *   that falls from W = 0 (one client, ping-pong) stops at the first W that has clearly
 *   fallen instead of paying a window at every larger W. A setting so ruled out stays out
 *   (unless it is the greedy one's neighbour) until it is measured or the table cleared, so
 *   the forgetting's re-exploration climbs from the peak instead of jumping to a far W.
 *
 *   Forgetting. Every observed window multiplies the weights of the current class's samples
 *   by discount (default 0.95: a sample counts half after 14 windows, 7 s at the controller's
 *   500 ms; idle windows, which the controller does not observe, forget nothing). An arm
 *   not run for long has a wide confidence box and is re-explored when tokens allow and
 *   the unimodality rule does not keep it out. A sample far off its setting's history (one beyond 5 deviations, or 3 in a
 *   row beyond 2.5 on the same side, once the history weighs 5 windows) is a change of the
 *   machine or the load: the class's whole history is dropped (the other settings' means are
 *   biased too) and the bucket refilled, so a change nobody announced re-targets like an
 *   announced one. A new class keeps what it learned before, its weights cut to retarget_keep.
 *
 * Load class without being told (paper 6.1 "many" / "single"): nom_load_concurrency() turns a
 * window's signals into a number of concurrent requests: the mean of the requests in flight
 * the stack counted at the window's snapshots (nom/adapt.h says why that and not connections),
 * or, when the stack cannot count them, its active connections; or, when larger, the requests
 * in service by Little's law (request rate x mean service latency), given a latency measured
 * apart from them. That number feeds nom/adapt.h's load meter (its thresholds and its
 * consecutive votes), so there is one hysteresis rule. Tested on traces recorded in QEMU
 * (libnom/tests/profit/traces/, test_load_traces.py).
 */
#ifndef NOM_LEARN_H
#define NOM_LEARN_H

#include <stddef.h>
#include <stdint.h>

#include <nom/adapt.h>

#define NOM_LEARN_MAX_ARMS 32

/* One setting of the data path: the batching delay and one more knob (0 when unused). */
struct nom_learn_arm_key {
    uint32_t w_us;
    uint32_t knob;
};

/* What one window measured while one setting ran. */
struct nom_learn_sample {
    double t_gbps;        /* outbound traffic, Gbit/s */
    double ops_per_s;     /* requests served per second */
    double latency_us;    /* mean latency of the window's requests, > 0 */
    double jitter_us;     /* their standard deviation */
    double exits_per_req; /* kicks + interrupts per request */
};

/* A setting's estimate: discounted means, the standard deviations of T and L, the weight
 * (windows it rests on, discounted; 0: never measured nor seeded). */
struct nom_learn_estimate {
    struct nom_learn_arm_key key;
    double weight;
    struct nom_learn_sample mean;
    double sd_t_gbps, sd_latency_us;
};

/* The caller's utility of an estimate at the current price, $/s, into *u; 0 or -EINVAL
 * (then the setting is never picked). */
typedef int (*nom_learn_score_fn)(const struct nom_learn_sample *est, void *ctx, double *u);

struct nom_learn_config {
    unsigned narms;
    struct nom_learn_arm_key arms[NOM_LEARN_MAX_ARMS]; /* distinct */
    double discount;        /* per window, in (0, 1] */
    double explore_share;   /* token accrual per window, in [0, 1) */
    double explore_burst;   /* bucket size, >= 0 */
    double ucb_c;           /* width of the optimistic box, sqrt(ucb_c ln N) errors */
    double retarget_keep;   /* weight kept by a class taken up again, in [0, 1] */
    double prior_weight;    /* windows a profile point counts for, > 0 (default 0.5: the
                             * first measurement outweighs it) */
    double prior_rel_sd;    /* how far off a profile point may be, relative, in [0, 1) */
    double min_rel_sd;      /* floor of a standard deviation, relative to its mean */
};

struct nom_learn_arm {
    double weight;
    double sum[5];                /* weighted sums of the sample's five fields */
    double sum_sq_t, sum_sq_l;    /* of T and L, for their deviations */
    int run_t, run_l;             /* change detector: samples in a row off the same side */
    int ruled_out;                /* past the peak when last looked at, not measured since
                                   * (learn.c, pick_optimistic) */
};

struct nom_learn {
    struct nom_learn_config cfg;
    nom_learn_score_fn score;
    void *ctx;
    enum nom_load_class cls;
    struct nom_learn_arm arms[NOM_LOAD_CLASSES][NOM_LEARN_MAX_ARMS];
    int current;     /* setting in use, -1 before the first nom_learn_next */
    int greedy;      /* best estimate at the last nom_learn_next, -1: none yet */
    double tokens;
    uint64_t windows, explorations, switches, changes;
};

/* The defaults above for the given settings (narms <= NOM_LEARN_MAX_ARMS, else -EINVAL). */
int nom_learn_config_default(struct nom_learn_config *cfg, const struct nom_learn_arm_key *arms,
                             unsigned narms);

/* Starts empty in class cls with a full token bucket. -EINVAL: no settings, too many,
 * duplicates, a parameter out of its range, no score function. */
int nom_learn_init(struct nom_learn *l, const struct nom_learn_config *cfg,
                   nom_learn_score_fn score, void *ctx, enum nom_load_class cls);

/* Seeds both classes from an offline profile of application app: each profile point whose W
 * is a setting's W (knob 0) counts as prior_weight windows. On a bad profile (none, fails
 * nom_adapt_profile_check, another application's, no W in common) nothing is seeded, the
 * reason goes into why[cap] and -EINVAL is returned: the learner then learns online only. */
int nom_learn_seed_profile(struct nom_learn *l, const struct nom_adapt_profile *prof,
                           const char *app, char *why, size_t cap);

/* The index of the setting to run for the next window. Never fails. */
int nom_learn_next(struct nom_learn *l);

/* One window's measurement of setting arm in the current class. -EINVAL: arm out of range,
 * a field not finite or negative, latency 0. */
int nom_learn_observe(struct nom_learn *l, int arm, const struct nom_learn_sample *s);

/* The load class changed: switch tables, cut the new one's weights to retarget_keep and
 * refill the bucket. No-op if cls is the current class. */
void nom_learn_set_class(struct nom_learn *l, enum nom_load_class cls);

/* The utility or the price changed (the score function now scores differently): the next
 * nom_learn_next picks the best estimate afresh, without hysteresis; the estimates are kept
 * and no exploration is granted (they do not depend on the price). Never fails. */
void nom_learn_retarget(struct nom_learn *l);

/* The estimate of setting arm in the current class; -EINVAL if arm is out of range. */
int nom_learn_estimate(const struct nom_learn *l, int arm, struct nom_learn_estimate *out);

/* The greedy setting (best estimated utility, in *u), or -ENOENT when nothing is known. */
int nom_learn_best(const struct nom_learn *l, double *u);

/* The signals of one window the load detector uses. */
struct nom_load_signals {
    unsigned active_conns;  /* connections that received a segment recently */
    double requests_per_s;  /* 1 / mean inter-arrival of requests */
    double latency_us;      /* mean service latency of the window's requests, 0: unknown */
    unsigned snapshots;     /* requests in flight counted this many times, 0: not counted */
    double in_flight;       /* their mean */
};

/* Concurrent requests the signals show, rounded to nearest: the larger of the mean requests in
 * flight (the active connections when not counted) and the requests in service by Little's
 * law. Feed it to nom_load_meter_sample. Never fails. */
unsigned nom_load_concurrency(const struct nom_load_signals *s);

#endif /* NOM_LEARN_H */
