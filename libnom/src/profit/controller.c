/* controller.c: the controller on nom (nom/adapt.h): options, the bandwidth price priced
 * publishes (paper 3.7, read through nom/price.h), the load sample timer, the decision, and
 * its report on the board (NOM_SYS_APP_REPORT) and the console. The stack's counter and knob
 * come through the registered struct nom_adapt_stack. Everything after nom_adapt_start runs in
 * libnom's scheduler context, so it never blocks and writes the console with the system call
 * (stdio may be held by a thread). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nom/adapt.h>
#include <nom/learn.h>
#include <nom/price.h>
#include <nom/sched.h>
#include <nom/syscall.h>
#include <nom/time.h>

#include "online.h"

/* --adapt-knob=idle-poll's values besides the stack's default (online.h). */
static const uint32_t idle_poll_us[] = ADAPT_ONLINE_IDLE_POLL_US;
#define IDLE_POLL_VALUES (sizeof idle_poll_us / sizeof idle_poll_us[0])

struct options {
    enum nom_utility_kind utility;
    int adapt_given;
    long fixed_w_us; /* -1: adaptive */
    int online;      /* --adapt-mode=online */
    int explicit_mode; /* --adapt-mode given */
    int trace;         /* --adapt-trace */
    int idle_poll_knob; /* --adapt-knob=idle-poll */
    uint32_t grid[NOM_LEARN_MAX_ARMS]; /* --adapt-grid=W,W,...: the learner's W values */
    unsigned ngrid;                    /* 0: the profile's, or online.h's default */
};

static struct {
    struct nom_adapt_status st;
    const struct nom_adapt_profile *prof;
    const struct nom_adapt_stack *stack;
    struct nom_utility_params params;
    struct nom_load_meter meter;
    struct nom_timer timer;
    struct adapt_online online; /* --adapt-mode=online only */
    uint64_t window_tsc;        /* start of the online window */
    int trace;                  /* --adapt-trace: a line per sample with the load signals */
    int idle_poll_knob;         /* --adapt-knob=idle-poll: online steers the idle poll too */
    unsigned ticks;             /* of the snapshot timer */
    unsigned snapshots;         /* requests in flight counted since the last sample ... */
    uint64_t in_flight_sum;     /* ... and their sum */
} ctl;

/* The value of "--name=value" if arg is that option, else NULL. */
static const char *value_of(const char *arg, const char *name)
{
    size_t n = strlen(name);
    return strncmp(arg, name, n) == 0 && arg[n] == '=' ? arg + n + 1 : NULL;
}

/* "--adapt-grid=W,W,...": 1 to NOM_LEARN_MAX_ARMS batching delays in microseconds, rising,
 * each at most NOM_ADAPT_MAX_W_US, into o; 1, or -EINVAL. */
static int parse_grid(const char *v, struct options *o)
{
    o->ngrid = 0;
    for (;;) {
        char *end;
        if (*v < '0' || *v > '9' || o->ngrid == NOM_LEARN_MAX_ARMS)
            return -EINVAL;
        unsigned long w = strtoul(v, &end, 10);
        if (w > NOM_ADAPT_MAX_W_US || (o->ngrid > 0 && w <= o->grid[o->ngrid - 1]))
            return -EINVAL;
        o->grid[o->ngrid++] = (uint32_t)w;
        if (*end == '\0')
            return 1;
        if (*end != ',')
            return -EINVAL;
        v = end + 1;
    }
}

/* 1 if arg is one of ours (parsed into o), 0 if not, -EINVAL if ours but malformed. */
static int parse_one(const char *arg, struct options *o)
{
    const char *v;
    if (strcmp(arg, "--adapt") == 0) {
        o->adapt_given = 1;
        return 1;
    }
    if (strcmp(arg, "--adapt-trace") == 0) {
        o->trace = 1;
        return 1;
    }
    if ((v = value_of(arg, "--adapt-knob"))) {
        o->idle_poll_knob = o->online = o->explicit_mode = 1; /* online only */
        return strcmp(v, "idle-poll") == 0 ? 1 : -EINVAL;
    }
    if ((v = value_of(arg, "--adapt-grid"))) {
        o->online = o->explicit_mode = 1; /* online only */
        return parse_grid(v, o);
    }
    if ((v = value_of(arg, "--utility")))
        return nom_utility_parse(v, &o->utility) == 0 ? 1 : -EINVAL;
    if ((v = value_of(arg, "--adapt-mode"))) {
        o->explicit_mode = 1;
        o->online = strcmp(v, "online") == 0;
        return o->online || strcmp(v, "profile") == 0 ? 1 : -EINVAL;
    }
    return 0;
}

/* Takes our options out of argv (argv[*argc] stays NULL). */
static int parse_options(int *argc, char **argv, struct options *o)
{
    int out = 1;
    for (int i = 1; i < *argc; i++) {
        int r = parse_one(argv[i], o);
        if (r < 0) {
            fprintf(stderr, "adapt: bad option %s (--utility=penalty|refund|bonus, --adapt, "
                            "--adapt-mode=profile|online, --adapt-knob=idle-poll, "
                            "--adapt-grid=W,W,... (us, rising), --adapt-trace)\n", argv[i]);
            return -EINVAL;
        }
        if (r == 0)
            argv[out++] = argv[i];
    }
    argv[out] = NULL;
    *argc = out;
    return 0;
}

/* The online learner's W values (--adapt-grid's, the profile's or the default grid), each with
 * every idle poll budget under --adapt-knob=idle-poll, must fit it (NOM_LEARN_MAX_ARMS
 * settings): checked before the controller starts, so that a learner it could not set up
 * stops the application with a reason instead of leaving it at W = 0 with nothing to learn. */
static int check_grid(const struct options *o, const struct nom_adapt_profile *prof)
{
    unsigned per_w = o->idle_poll_knob ? 1 + IDLE_POLL_VALUES : 1;
    unsigned nw = adapt_online_w_count(prof, o->grid, o->ngrid);
    if (!o->online || nw * per_w <= NOM_LEARN_MAX_ARMS)
        return 0;
    fprintf(stderr, "adapt: %s: %u W values x %u idle poll budgets are more than the "
                    "learner's %u settings\n", o->ngrid ? "--adapt-grid" : "the profile", nw,
            per_w, NOM_LEARN_MAX_ARMS);
    return -EINVAL;
}

/* The W the command line fixed through the stack (nom/adapt.h), checked against the options. */
static int take_fixed_w(const struct nom_adapt_stack *stack, struct options *o)
{
    long w = stack && stack->fixed_batching_delay_us ? stack->fixed_batching_delay_us() : -1;
    if (w < 0)
        return 0;
    if (w > (long)NOM_ADAPT_MAX_W_US) {
        fprintf(stderr, "adapt: a fixed W of %ld us is above %u\n", w, NOM_ADAPT_MAX_W_US);
        return -EINVAL;
    }
    if (o->adapt_given || o->online) {
        fprintf(stderr, "adapt: --adapt or --adapt-mode and --batching-delay exclude each "
                        "other\n");
        return -EINVAL;
    }
    o->fixed_w_us = w;
    return 0;
}

/* Reads the published bandwidth price into the state; 1 if the price acted on changed. */
static int read_price(void)
{
    struct nom_price p;
    int has = nom_price_bandwidth(&p) == 0;
    double price = has ? p.usd_per_gbit : 0.0;
    int stale = has && p.stale;
    int changed = has != ctl.st.has_price || price != ctl.st.price || stale != ctl.st.price_stale;
    ctl.st.has_price = has;
    ctl.st.price = price;
    ctl.st.price_stale = stale;
    ctl.st.price_stale_since_tsc = stale ? p.stale_since_tsc : 0;
    return changed;
}

static void report(void)
{
    struct nom_bb_app_report r = {
        .batching_delay_ns = ctl.st.w_us * 1000u, /* W <= 1 s: fits in 32 bits */
        .subscribe_prices = 1,
        .price_seen_micro = llround(ctl.st.price * 1e6),
        .profit_rate_micro = ctl.st.has_rate ? llround(ctl.st.profit_rate * 1e6) : 0,
    };
    nom_sys_app_report(&r);
}

static void log_decision(const char *why)
{
    char line[240];
    int n = snprintf(line, sizeof line,
                     "adapt: W=%u us (%s: load %s, %u active connections, price %lld u$/Gbit, "
                     "%s %s expected %lld u$/s)\n",
                     (unsigned)ctl.st.w_us, why, nom_load_name(ctl.st.load),
                     ctl.st.active_conns, (long long)llround(ctl.st.price * 1e6),
                     ctl.st.online     ? "online"
                     : ctl.st.adaptive ? "adaptive"
                                       : "fixed",
                     nom_utility_name(ctl.st.utility),
                     ctl.st.has_rate ? (long long)llround(ctl.st.profit_rate * 1e6) : 0ll);
    if (n > 0 && (size_t)n < sizeof line && ctl.idle_poll_knob) /* after the ")": keeps its shape */
        n += snprintf(line + n - 1, sizeof line - (size_t)n + 1, " idle-poll %u us\n",
                      ctl.st.idle_poll_us) - 1;
    if (n > 0)
        nom_sys_console_write(line, (uint64_t)n < sizeof line ? (uint64_t)n : sizeof line - 1);
}

/* Sets the stack's W to a W the controller picked (a profile's or the learner's). The W
 * is the hardware's time and so is the guest's clock, under the exit-cost QEMU too (its guest
 * clock is dilated by D, tools/kvmcost patches/0003): set as is. 0, or the stack's error. */
static int apply_w(uint32_t w_us)
{
    return ctl.stack->set_batching_delay_us(w_us);
}

/* --adapt-knob=idle-poll: the idle poll budget of the learner's setting, guest microseconds
 * (0: libnom's default); 1 if it changed. */
static int apply_knob(uint32_t us)
{
    us = us ? us : NOM_IDLE_POLL_US_DEFAULT;
    if (!ctl.idle_poll_knob || us == ctl.st.idle_poll_us)
        return 0;
    nom_sched_set_idle_poll_us(us);
    ctl.st.idle_poll_us = us;
    return 1;
}

/* Online: applies W (the learner's or the safe one) and the second knob, reports and logs
 * them when they change; a new price goes on the board even when W stays. */
static void online_apply(uint32_t w, uint32_t knob, const char *why, int price_changed)
{
    struct nom_adapt_status *st = &ctl.st;
    st->decisions++;
    if (apply_knob(knob) && w == st->w_us) {
        report();
        log_decision(why);
        return;
    }
    if (w == st->w_us || apply_w(w) != 0) {
        if (price_changed)
            report();
        return;
    }
    st->w_us = w;
    st->w_changes++;
    report();
    log_decision(why);
}

/* One line with what the online window measured (--adapt-trace), before the learner takes
 * it: the learner's sample (online.c) of the W that ran. */
static void trace_window(const struct nom_adapt_counters *now, double seconds)
{
    struct nom_learn_sample s;
    char line[200];
    if (adapt_online_sample(&ctl.online.last, now, seconds, ctl.st.active_conns, &s) != 0)
        return;
    int n = snprintf(line, sizeof line,
                     "adapt-window: W=%u ops/s=%.0f latency_us=%.1f jitter_us=%.1f "
                     "exits/req=%.3f timed=%llu\n", (unsigned)ctl.st.w_us, s.ops_per_s,
                     s.latency_us, s.jitter_us, s.exits_per_req,
                     (unsigned long long)(now->requests_timed - ctl.online.last.requests_timed));
    if (n > 0)
        nom_sys_console_write(line, (uint64_t)n < sizeof line ? (uint64_t)n : sizeof line - 1);
}

/* Online: one window ended; the learner names the next W (nom/learn.h), applied and logged
 * when it changes (why: "learn" for its best estimate, "explore" for a budgeted probe). */
static void decide_online(int price_changed)
{
    struct nom_adapt_status *st = &ctl.st;
    struct nom_adapt_counters now;
    uint64_t tsc = nom_tsc();
    double seconds = (double)(tsc - ctl.window_tsc) / (double)nom_us_to_tsc(1000000), rate;
    int explore, has_rate;
    ctl.stack->counters(&now);
    ctl.window_tsc = tsc;
    if (st->price_stale) { /* no price to trust: the safe W (nom/adapt.h), nothing learned */
        adapt_online_hold(&ctl.online, &now, NOM_ADAPT_SAFE_W_US);
        online_apply(NOM_ADAPT_SAFE_W_US, 0, "stale price", price_changed);
        return;
    }
    ctl.online.price = st->price;
    if (ctl.trace)
        trace_window(&now, seconds);
    uint32_t w = adapt_online_window(&ctl.online, &now, seconds, st->active_conns, st->load,
                                     nom_load_meter_settled(&ctl.meter), price_changed,
                                     &explore, &rate, &has_rate);
    st->explorations += (uint64_t)explore;
    st->has_rate = has_rate;
    st->profit_rate = rate;
    online_apply(w, adapt_online_knob(&ctl.online), explore ? "explore" : "learn",
                 price_changed);
}

/* Picks W for the current class and price (or rates the fixed W), applies and reports it. */
static void decide(const char *why)
{
    struct nom_adapt_status *st = &ctl.st;
    double rate = 0;
    int i;
    if (st->adaptive && st->price_stale) { /* no price to trust: the safe W (nom/adapt.h) */
        i = nom_adapt_find_w(ctl.prof, st->load, NOM_ADAPT_SAFE_W_US);
        const struct nom_adapt_point *pt = i >= 0 ? &ctl.prof->points[st->load][i] : NULL;
        if (pt && nom_utility(st->utility, &ctl.params, pt->t_gbps, pt->latency_us,
                              pt->jitter_us, st->price, &rate) != 0)
            i = -EINVAL;
        if (st->w_us != NOM_ADAPT_SAFE_W_US &&
            apply_w(NOM_ADAPT_SAFE_W_US) == 0) {
            st->w_us = NOM_ADAPT_SAFE_W_US;
            st->w_changes++;
        }
    } else if (st->adaptive) {
        i = nom_adapt_best(ctl.prof, st->load, st->utility, &ctl.params, st->price, &rate);
        uint32_t w = i >= 0 ? ctl.prof->points[st->load][i].w_us : st->w_us;
        if (w != st->w_us && apply_w(w) == 0) {
            st->w_us = w;
            st->w_changes++;
        }
    } else {
        i = nom_adapt_find_w(ctl.prof, st->load, st->w_us);
        const struct nom_adapt_point *pt = i >= 0 ? &ctl.prof->points[st->load][i] : NULL;
        if (pt && nom_utility(st->utility, &ctl.params, pt->t_gbps, pt->latency_us,
                              pt->jitter_us, st->price, &rate) != 0)
            i = -EINVAL;
    }
    st->has_rate = i >= 0;
    st->profit_rate = i >= 0 ? rate : 0;
    st->decisions++;
    report();
    log_decision(why);
}

/* One line with the window's load signals (--adapt-trace), for recording detector traces. */
static void trace_load(const struct nom_load_signals *sig)
{
    char line[160];
    int n = snprintf(line, sizeof line,
                     "adapt-load: conns=%u in_flight=%.3f snapshots=%u concurrency=%u "
                     "class=%s\n", sig->active_conns, sig->in_flight, sig->snapshots,
                     ctl.st.concurrency, nom_load_name(ctl.st.load));
    if (n > 0)
        nom_sys_console_write(line, (uint64_t)n < sizeof line ? (uint64_t)n : sizeof line - 1);
}

/* A sample ended: the load class from the window's signals (nom/adapt.h), the price, and the
 * decision. */
static void sample(void)
{
    struct nom_load_signals sig = {.active_conns = ctl.stack->active_conns(),
                                   .snapshots = ctl.snapshots};
    if (ctl.snapshots > 0)
        sig.in_flight = (double)ctl.in_flight_sum / ctl.snapshots;
    ctl.snapshots = 0;
    ctl.in_flight_sum = 0;
    ctl.st.active_conns = sig.active_conns;
    ctl.st.in_flight = sig.in_flight;
    ctl.st.concurrency = nom_load_concurrency(&sig);
    int load_changed = nom_load_meter_sample(&ctl.meter, ctl.st.concurrency);
    ctl.st.load = ctl.meter.cls;
    if (ctl.trace)
        trace_load(&sig);
    int price_changed = read_price(); /* a missed notification is caught here */
    if (ctl.st.online)
        decide_online(price_changed);
    else if (load_changed || price_changed)
        decide(load_changed ? "load" : "price");
}

/* Every NOM_ADAPT_SNAPSHOT_MS: the requests in flight now; every NOM_ADAPT_SAMPLE_MS: a sample. */
static void tick(void *arg)
{
    (void)arg;
    if (ctl.stack->requests_in_flight) {
        ctl.in_flight_sum += ctl.stack->requests_in_flight();
        ctl.snapshots++;
    }
    if (++ctl.ticks % (NOM_ADAPT_SAMPLE_MS / NOM_ADAPT_SNAPSHOT_MS) == 0)
        sample();
    nom_timer_add(&ctl.timer, nom_tsc() + nom_us_to_tsc(NOM_ADAPT_SNAPSHOT_MS * 1000ull), tick,
                  NULL);
}

/* nom/price.h's subscription calls this on NOM_NOTIFY_PRICE (scheduler context). */
static void on_price(const struct nom_price *now, void *arg)
{
    (void)now, (void)arg;
    /* Online, the next window reads the price and re-scores the learner's estimates at it
     * (nom_learn_retarget). Reading it here took the change away from that window: the learner
     * kept the old price's choice by its hysteresis until an exploration happened to move it
     * (CI, test_adapt_online.py: W = 40 for two minutes after the price fell). */
    if (!ctl.st.online && read_price())
        decide("price");
}

/* Online mode's start: the learner over the profile's grid, seeded from it if it is this
 * application's (app: argv[0]); a profile that cannot seed is said on the console. */
static void start_online(const char *app, const struct options *o)
{
    struct nom_adapt_counters now;
    char why[200] = "";
    ctl.stack->counters(&now);
    ctl.window_tsc = nom_tsc();
    const char *slash = app ? strrchr(app, '/') : NULL;
    /* -EINVAL (too many settings) was ruled out by check_grid */
    int r = adapt_online_start(&ctl.online, ctl.prof, slash ? slash + 1 : app, ctl.st.utility,
                               ctl.st.load, ctl.st.w_us, o->grid, o->ngrid, idle_poll_us,
                               ctl.idle_poll_knob ? IDLE_POLL_VALUES : 0, &now, why, sizeof why);
    ctl.st.online = 1;
    if (r == 1) {
        size_t n = strnlen(why, sizeof why - 1);
        why[n++] = '\n'; /* the console gets a line; no NUL needed */
        nom_sys_console_write(why, n);
    }
    uint32_t w = ctl.online.learn.cfg.arms[ctl.online.arm].w_us;
    if (w != ctl.st.w_us && apply_w(w) == 0)
        ctl.st.w_us = w;
    apply_knob(0);
    ctl.st.decisions++;
    report();
    log_decision("start online");
}

/* Checks the profile and the fixed W against the stack; prints why it cannot start. */
static int check_start(const struct nom_adapt_profile *prof, const struct options *o,
                       const struct nom_adapt_stack *stack)
{
    char why[160];
    if (!o->online && nom_adapt_profile_check(prof, why, sizeof why) != 0) {
        fprintf(stderr, "adapt: %s\n", why); /* online mode learns without it */
        return -EINVAL;
    }
    if (stack == NULL) {
        fprintf(stderr, "adapt: no network stack registered (start it first)\n");
        return -ENODEV;
    }
    if (o->online && stack->counters == NULL) {
        fprintf(stderr, "adapt: the network stack has no counters to learn from\n");
        return -EINVAL;
    }
    int r = stack->set_batching_delay_us(o->fixed_w_us >= 0 ? (uint32_t)o->fixed_w_us
                                                            : stack->batching_delay_us());
    if (r != 0)
        fprintf(stderr, "adapt: the network stack is not started (%s)\n", strerror(-r));
    return r;
}

int nom_adapt_start(int *argc, char **argv, const struct nom_adapt_profile *prof)
{
    struct options o = {.utility = NOM_UTILITY_PENALTY, .fixed_w_us = -1};
    const struct nom_adapt_stack *stack = nom_adapt_stack();
    if (ctl.st.started)
        return -EALREADY;
    int r = parse_options(argc, argv, &o);
    if (r == 0)
        r = take_fixed_w(stack, &o);
    if (prof == NULL && !o.explicit_mode && o.fixed_w_us < 0)
        o.online = 1; /* no profile: learn (nom/adapt.h) */
    if (r == 0)
        r = check_grid(&o, prof);
    if (r == 0)
        r = check_start(prof, &o, stack);
    if (r == 0 && nom_price_subscribe(on_price, NULL) != 0) {
        fprintf(stderr, "adapt: cannot subscribe to price notifications\n");
        r = -EINVAL;
    }
    if (r != 0)
        return r;
    nom_preempt_disable();
    ctl.prof = prof;
    ctl.stack = stack;
    ctl.params = nom_utility_defaults();
    ctl.trace = o.trace;
    ctl.idle_poll_knob = o.idle_poll_knob;
    /* An idle server starts as "single": its first request is a lone one (nom/adapt.h). */
    nom_load_meter_init(&ctl.meter, NOM_LOAD_SINGLE);
    ctl.st = (struct nom_adapt_status){.started = 1, .adaptive = o.fixed_w_us < 0,
                                       .utility = o.utility, .load = NOM_LOAD_SINGLE,
                                       .w_us = stack->batching_delay_us()};
    read_price();
    if (o.online)
        start_online(argv[0], &o);
    else
        decide("start");
    nom_timer_add(&ctl.timer, nom_tsc() + nom_us_to_tsc(NOM_ADAPT_SNAPSHOT_MS * 1000ull), tick,
                  NULL);
    nom_preempt_enable();
    return 0;
}

void nom_adapt_status(struct nom_adapt_status *out)
{
    nom_preempt_disable();
    *out = ctl.st;
    nom_preempt_enable();
    uint64_t now = nom_tsc(), since = out->price_stale_since_tsc;
    double ticks_per_s = (double)nom_us_to_tsc(1000000);
    out->price_stale_age_s = out->price_stale && now > since ? (double)(now - since) / ticks_per_s : 0;
}
