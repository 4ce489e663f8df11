/*
 * nom/adapt.h: the profit-maximizing controller an application links (paper sections 4-6;
 * DESIGN.md "Profit"). It picks the batching delay W (paper 3.6) that maximizes the
 * application's utility function at the current bandwidth price and load.
 *
 * Contract. The controller is libnom's (src/profit/); the stack it steers is not: the network
 * stack registers its knob and its counter once it runs (struct nom_adapt_stack below; net/
 * does it in nom_net_start), so libnom includes nothing of the stack. The application links
 * one generated profile object (defining nom_adapt_profile from apps/<app>/profile/
 * profile.json, tools/profile/cgen.py through libnom/app.mk's NOM_PROFILE_CGEN) and calls
 * nom_adapt_start() once, after the stack has started, from a thread. From then on the
 * controller runs in libnom's scheduler context (a timer and the notification handler) and
 * never blocks: it samples the load every NOM_ADAPT_SAMPLE_MS, re-reads the price on
 * NOM_NOTIFY_PRICE (and at every sample, in case a notification was missed), and whenever the
 * load class or the price changes it evaluates the utility over the profile of the current
 * class, sets the stack's batching delay to the best W (adaptive mode) and reports W, the
 * price seen and the expected profit rate on the bulletin board (NOM_SYS_APP_REPORT,
 * subscribed to price notifications). nom_adapt_status() is any-context and never fails.
 * It owns libnom's notification handler (nom_notify_handler_set, through nom/price.h).
 *
 * Units are tools/profit/utility.py's, the one place they are fixed: T in Gbit/s of outbound
 * traffic, P and alpha in $/Gbit, latencies in us, beta per refund_unit_us (1 ms) of mean
 * latency, gamma over bonus_unit_us (1 s); a utility is a profit rate in $/s. The functions
 * below compute the same doubles as the Python, line by line (host tests compare them).
 *
 * Load class (paper 6.1: "many" small users, or a "single" user, one request at a time),
 * measured from what the stack sees, never told. Every NOM_ADAPT_SNAPSHOT_MS the controller
 * asks the stack how many requests are in flight now (struct nom_adapt_stack's
 * requests_in_flight: connections holding a request the application has not read yet or an
 * answer not yet sent or acknowledged, and on a connection whose client sends without waiting
 * for answers (a stream) each receive window's worth it sent since the last answer, capped
 * at twice NOM_ADAPT_MANY_CONNS: net/adapt_stack.c); the mean over a NOM_ADAPT_SAMPLE_MS window is the
 * window's concurrency (nom/learn.h's nom_load_concurrency; a stack without the count gives
 * its active connections instead). A window of at least NOM_ADAPT_MANY_CONNS votes "many",
 * one of at most NOM_ADAPT_SINGLE_CONNS votes "single" (an idle server too: the next request
 * it gets is a lone one, and W for latency serves it best), anything between votes for no
 * change; the class changes after NOM_ADAPT_VOTES consecutive votes for the other class. Why
 * requests in flight and not connections: a single user waiting for answers never has two
 * requests out at once, however many connections it holds open or opens one after another,
 * while many users keep many exchanges open (and one stream keeps many messages out); and
 * the count has no memory, so "many" -> "single" is seen at the next
 * votes instead of after the connections' activity timer (1 s) runs out. The dead band and
 * the consecutive votes keep a burst or a lull from flapping W.
 *
 * Command-line options (removed from argv by nom_adapt_start; W itself has one spelling on
 * every command line, --batching-delay=US, which the stack takes and hands over here through
 * struct nom_adapt_stack: with it, W stays fixed, for profile sweeps and paper 6.5's static
 * columns, and the controller still reports price and profit):
 *   --utility=penalty|refund|bonus   the utility function (default penalty, eq. 2)
 *   --adapt                          pick W from price and load (the default)
 *   --adapt-mode=profile|online      how W is picked (default profile): from the offline
 *                                    profile as above, or learned while serving by nom/learn.h
 *                                    (seeded from the profile when it is valid and the
 *                                    application's, else learned from scratch, the reason
 *                                    printed). Online, every NOM_ADAPT_SAMPLE_MS window is
 *                                    measured from the stack's counters: T from the bytes sent,
 *                                    the request rate from the packets received (one segment
 *                                    per request in request/response protocols, an estimate),
 *                                    the mean latency by Little's law for closed-loop users
 *                                    (active connections / request rate; jitter taken equal to
 *                                    it), exits per request from kicks and interrupts.
 *   --adapt-knob=idle-poll           online mode (implied) steers a second knob jointly with
 *                                    W: libnom's idle poll budget (nom/sched.h), libnom's
 *                                    default of 50 us, or 10 or 200 us (three times the
 *                                    settings, so three times the first sweep: opt-in); the
 *                                    console line of each change ends "idle-poll N us"
 *   --adapt-grid=W,W,...             online mode (implied) over these batching delays, us,
 *                                    rising, at most NOM_ADAPT_MAX_W_US, up to
 *                                    NOM_LEARN_MAX_ARMS of them, instead of the profile's (or
 *                                    the default 0-40 us); profile points at the same W still
 *                                    seed them. For a host where the profile's grid is finer
 *                                    than the noise (apps/tests/adapt/test_adapt_online.py)
 *   --adapt-trace                    one console line per sample with the load signals
 *                                    ("adapt-load: conns=.. in_flight=.. snapshots=..
 *                                    class=.."), for recording detector traces; in online
 *                                    mode also what the window measured ("adapt-window:
 *                                    W=.. ops/s=.. latency_us=.. jitter_us=.. ...")
 *
 * Time. W, latencies and the SLO are the hardware's microseconds, and so is the guest's clock,
 * also under tools/kvmcost's exit-cost QEMU (it dilates the guest's clock by the D it slows the
 * guest by): W is set on the stack as picked, and profiles measured under that model are read
 * in the hardware's time (tools/profile's kvm_equivalent, applied by cgen.py).
 */
#ifndef NOM_ADAPT_H
#define NOM_ADAPT_H

#include <stddef.h>
#include <stdint.h>

#define NOM_ADAPT_MAX_POINTS 64
#define NOM_ADAPT_MAX_W_US 1000000u /* the largest W a stack must accept */
/* The W the adaptive controller runs while the published price is stale (priced cannot
 * confirm it: provider down, too slow, garbage, an absurd price; nom/price.h): 0, run to
 * completion. Why: with no price to trust there is no trade to make, and W = 0 has the lowest
 * latency in every profile (no SLO penalty from batching) and is what a conventional stack
 * runs; what it gives up is the saving a known price would buy. The controller returns to the
 * price's best W with priced's next good publication. A fixed --batching-delay stays fixed. */
#define NOM_ADAPT_SAFE_W_US 0u
#define NOM_ADAPT_SAMPLE_MS 500u
#define NOM_ADAPT_SNAPSHOT_MS 50u /* requests in flight counted 10 times a sample */
#define NOM_ADAPT_MANY_CONNS 4u
#define NOM_ADAPT_SINGLE_CONNS 1u
#define NOM_ADAPT_VOTES 2u

enum nom_load_class { NOM_LOAD_MANY = 0, NOM_LOAD_SINGLE = 1, NOM_LOAD_CLASSES = 2 };
enum nom_utility_kind { NOM_UTILITY_PENALTY = 0, NOM_UTILITY_REFUND = 1, NOM_UTILITY_BONUS = 2 };

/* What the application achieves at one W under one load class. */
struct nom_adapt_point {
    uint32_t w_us;
    double t_gbps;     /* outbound traffic, Gbit/s */
    double ops_per_s;  /* requests served per second (reported, not used by the utility) */
    double latency_us; /* mean latency, > 0 */
    double jitter_us;  /* standard deviation of latency */
};

/* A profile: per class, points in strictly increasing W, the same W values in both classes. */
struct nom_adapt_profile {
    const char *app;
    const char *source; /* what measured it: accelerator and command, for the record */
    unsigned npoints;
    const struct nom_adapt_point *points[NOM_LOAD_CLASSES];
};

/* The generated table of the application (tools/profile/cgen.py). */
extern const struct nom_adapt_profile nom_adapt_profile;

/* The utility function's parameters; nom_utility_defaults() gives the paper's (6.4). */
struct nom_utility_params {
    double alpha, beta, gamma, delta, x, l0_us, refund_unit_us, bonus_unit_us;
};

/* A consistent copy of the controller's state, for /nom/stats and memcached's `stats`. */
struct nom_adapt_status {
    int started;                /* 0 before nom_adapt_start succeeded: the rest is zero */
    int adaptive;               /* 0: W fixed by --batching-delay */
    enum nom_utility_kind utility;
    enum nom_load_class load;
    uint32_t w_us;              /* W in use */
    int has_price;              /* 0: no bandwidth price on the board yet (P taken as 0) */
    double price;               /* $/Gbit acted on */
    int price_stale;            /* 1: priced marked it stale (abi.h NOM_PRICE_STALE): W is
                                 * NOM_ADAPT_SAFE_W_US, not the price's best */
    double price_stale_age_s;   /* since priced's last good answer, 0 unless stale */
    uint64_t price_stale_since_tsc;
    int has_rate;               /* 0: W not in the profile (fixed W), no expected rate */
    double profit_rate;         /* expected utility at W, $/s */
    unsigned active_conns;      /* at the last sample */
    double in_flight;           /* mean requests in flight over the last sample's snapshots */
    unsigned concurrency;       /* what the load class was voted on (nom_load_concurrency) */
    uint64_t decisions;         /* evaluations so far (load or price changes) */
    uint64_t w_changes;         /* times W actually changed */
    int online;                 /* 1: --adapt-mode=online (nom/learn.h picks W) */
    uint64_t explorations;      /* online: windows spent off the best estimate */
    uint32_t idle_poll_us;      /* --adapt-knob=idle-poll: the idle poll budget set (guest
                                 * microseconds), else 0 */
};

/* ---- The pure part (host-tested; no nom dependency) ---------------------------------------- */

/* The paper's parameters: alpha 20, beta 10, gamma 0.01, delta +inf, X 100, L0 750 us, beta
 * per 1000 us, gamma over 1e6 us. Never fails. */
struct nom_utility_params nom_utility_defaults(void);

/* U of kind at one operating point into *out ($/s). Returns 0, or -EINVAL: t or latency
 * negative or NaN, jitter negative (penalty), latency 0 (bonus), unknown kind. */
int nom_utility(enum nom_utility_kind kind, const struct nom_utility_params *p, double t_gbps,
                double latency_us, double jitter_us, double price, double *out);

/* Checks a profile; on error returns -EINVAL and writes why (one line) into why[cap]. */
int nom_adapt_profile_check(const struct nom_adapt_profile *prof, char *why, size_t cap);

/* Index of the point of class cls maximizing U at price (the lowest W among equals), with its
 * U in *rate. Returns the index, or -EINVAL (a point the utility rejects; profiles that passed
 * nom_adapt_profile_check never do). */
int nom_adapt_best(const struct nom_adapt_profile *prof, enum nom_load_class cls,
                   enum nom_utility_kind kind, const struct nom_utility_params *p, double price,
                   double *rate);

/* Index of the point of class cls with W == w_us, or -ENOENT. */
int nom_adapt_find_w(const struct nom_adapt_profile *prof, enum nom_load_class cls,
                     uint32_t w_us);

/* The load classifier with hysteresis described above. */
struct nom_load_meter {
    enum nom_load_class cls;
    unsigned votes;           /* consecutive samples voting for the other class */
    enum nom_load_class vote; /* the last sample's; NOM_LOAD_CLASSES: the dead band */
};

/* Starts in cls. Never fails. */
void nom_load_meter_init(struct nom_load_meter *m, enum nom_load_class cls);
/* One sample of concurrency concurrent requests (nom/learn.h's nom_load_concurrency). Returns 1
 * if the class changed, else 0. */
int nom_load_meter_sample(struct nom_load_meter *m, unsigned concurrency);
/* 1 if the last sample voted for the class in force (or none was taken yet), else 0: a window
 * in the dead band or before a change the votes have not confirmed yet measured another load
 * than the class's, and must not teach the class's estimates (online.c). */
int nom_load_meter_settled(const struct nom_load_meter *m);

/* "penalty", "refund", "bonus" / "many", "single"; "?" for other values. */
const char *nom_utility_name(enum nom_utility_kind kind);
const char *nom_load_name(enum nom_load_class cls);
/* Parses a utility name; 0, or -EINVAL. */
int nom_utility_parse(const char *name, enum nom_utility_kind *out);

/* ---- What the network stack lends the controller --------------------------------------- */

/* The stack's knob and counter. Every function is called from thread or scheduler context
 * and must not block (it may disable preemption briefly, as a stack lock). */
/* What a stack counts on its data path (monotonic). */
struct nom_adapt_counters {
    uint64_t tx_bytes;   /* frames sent, bytes */
    uint64_t rx_packets; /* frames received */
    uint64_t exits;      /* notifications to the device and interrupts taken (VM exits) */
    /* Requests answered on accepted connections and the sums of their residence in the
     * server, in microseconds of the guest's clock: from the request's first segment reaching
     * the socket to the whole answer handed over (net/sock_tcp.c, "Residence"); 0 when the
     * stack does not time them. */
    uint64_t requests_timed;
    double residence_us_sum, residence_us_sq_sum;
};

struct nom_adapt_stack {
    /* Connections in ESTABLISHED that received a segment in about the last second. Never
     * fails. */
    unsigned (*active_conns)(void);
    /* Requests in flight now ("Load class" above): connections in ESTABLISHED holding received
     * data the application has not read, or an answer not yet sent or not yet acknowledged,
     * a streaming client's connection for each receive window it sent since the last answer
     * (capped). NULL: the stack cannot tell (the active connections stand in). Never fails. */
    unsigned (*requests_in_flight)(void);
    /* Sets the batching delay W (paper 3.6) to us: 0, -EINVAL (above what the stack takes),
     * -ENODEV (the stack is not running). */
    int (*set_batching_delay_us)(uint32_t us);
    /* The W in force. Never fails. */
    uint32_t (*batching_delay_us)(void);
    /* Monotonic data-path counters for online learning (--adapt-mode=online); NULL if the
     * stack has none. Never fails. */
    void (*counters)(struct nom_adapt_counters *out);
    /* The W the application's command line fixed (--batching-delay=US, the stack's option,
     * nom/net.h), or -1 when it left W to the controller; NULL: never fixed. Never fails. */
    long (*fixed_batching_delay_us)(void);
};

/* Registers the stack (the last registration wins; stack must outlive the program). Called
 * by the stack once it runs, before nom_adapt_start. Never fails. */
void nom_adapt_stack_register(const struct nom_adapt_stack *stack);

/* The registered stack, or NULL if none. Never fails. */
const struct nom_adapt_stack *nom_adapt_stack(void);

/* ---- On nom ------------------------------------------------------------------------------- */

/* Takes the options above out of argv (updating *argc), checks prof, subscribes to price
 * notifications, applies the first decision (or the fixed W) and starts sampling. prof NULL
 * (an application without a profile) makes online the default mode; profile mode
 * and a fixed W refuse to start without one. Prints
 * "adapt: ..." lines on the console. Returns 0, or -EINVAL (malformed option, bad profile:
 * the reason is printed), -ENODEV (no stack registered, or it refused W), -EALREADY. */
int nom_adapt_start(int *argc, char **argv, const struct nom_adapt_profile *prof);

/* Copies the state. Never fails (zeros before nom_adapt_start). */
void nom_adapt_status(struct nom_adapt_status *out);

#endif /* NOM_ADAPT_H */
