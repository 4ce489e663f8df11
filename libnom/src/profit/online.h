/* online.h: the controller's online mode (--adapt-mode=online, nom/adapt.h): the learner of
 * nom/learn.h fed with one window of the stack's counters at a time. Pure (no nom calls:
 * times come in as seconds), so the host tests run it. */
#ifndef NOM_PROFIT_ONLINE_H
#define NOM_PROFIT_ONLINE_H

#include <nom/adapt.h>
#include <nom/learn.h>

/* Windows with fewer received packets say nothing about W: the server was idle. */
#define ADAPT_ONLINE_MIN_PACKETS 20u
/* Windows with fewer timed requests keep the exponential's jitter (online.c, jitter_of). */
#define ADAPT_ONLINE_MIN_TIMED 20u

struct adapt_online {
    struct nom_learn learn;
    enum nom_utility_kind kind;
    struct nom_utility_params params;
    double price;                   /* $/Gbit, the controller keeps it current */
    struct nom_adapt_counters last; /* at the start of the window */
    int arm;                        /* setting in force, -1: a W off the grid */
};

/* The second knob's values with --adapt-knob=idle-poll, beside 0 (libnom's default,
 * NOM_IDLE_POLL_US_DEFAULT, 50): the idle poll budget in guest microseconds (nom/sched.h; its
 * doc has what 25-100 us cost NetPIPE in instructions and interrupts per message): 10 us
 * spins less and halts more, 200 us catches a slow client's next request. */
#define ADAPT_ONLINE_IDLE_POLL_US {10, 200}

/* The W grid when no valid profile gives one: the experiment's, with 5 us (paper 6.1). */
#define ADAPT_ONLINE_DEFAULT_W {0, 5, 10, 20, 30, 40}

/* Sets up the learner over the W values grid[ngrid] (ngrid 0: the profile's, or the default
 * grid; --adapt-grid's, rising), in class cls, each W
 * with the second knob's value 0 (the stack's default) and each of knobs[nknobs] (none: W
 * alone), seeds it from the profile (W with knob 0), and starts at the setting closest to w_now
 * with knob 0. A profile that cannot seed (nom_learn_seed_profile) leaves its one-line reason
 * in why[cap] and returns 1: learning goes on from scratch. Returns 0, 1, or -EINVAL (the
 * learner refused its configuration: more settings than NOM_LEARN_MAX_ARMS, a knob of 0). */
int adapt_online_start(struct adapt_online *o, const struct nom_adapt_profile *prof,
                       const char *app, enum nom_utility_kind kind, enum nom_load_class cls,
                       uint32_t w_now, const uint32_t *grid, unsigned ngrid,
                       const uint32_t *knobs, unsigned nknobs,
                       const struct nom_adapt_counters *now, char *why, size_t cap);

/* How many W values adapt_online_start would learn over with this profile and grid[ngrid]
 * (the caller's, the profile's or the default grid), for the controller to refuse at its start
 * a learner that W values x (1 + knob values) would overfill (NOM_LEARN_MAX_ARMS). */
unsigned adapt_online_w_count(const struct nom_adapt_profile *prof, const uint32_t *grid,
                              unsigned ngrid);

/* The second knob's value of the setting in force (0: the stack's default, also off the
 * grid). Never fails. */
uint32_t adapt_online_knob(const struct adapt_online *o);

/* One window's sample from the counters at its start and end, its length and the active
 * connections: 0, or -EAGAIN (an idle window: too few packets, or no connection). */
int adapt_online_sample(const struct nom_adapt_counters *start,
                        const struct nom_adapt_counters *end, double seconds, unsigned conns,
                        struct nom_learn_sample *out);

/* A window of `seconds` ended with counters now: learns from it (unless idle, or not settled:
 * the load detector's last vote was not for cls, nom_load_meter_settled), follows the class
 * and a price change, and returns the W for the next window (*explore: 1 if that W is an
 * exploration). The expected rate of the best estimate goes into *rate (*has_rate 0 when
 * nothing is known yet). */
uint32_t adapt_online_window(struct adapt_online *o, const struct nom_adapt_counters *now,
                             double seconds, unsigned conns, enum nom_load_class cls,
                             int settled, int price_changed, int *explore, double *rate,
                             int *has_rate);

/* The controller runs w_us for a reason of its own (a stale price: NOM_ADAPT_SAFE_W_US): the
 * window that ended with counters now is dropped, and the next one is learned from only if
 * w_us is on the grid. Never fails. */
void adapt_online_hold(struct adapt_online *o, const struct nom_adapt_counters *now,
                       uint32_t w_us);

#endif /* NOM_PROFIT_ONLINE_H */
