/* adapt_test.c: host cases of libnom's controller (nom/adapt.h, src/profit/) over fakes of
 * libnom, the board and the stack (fake/), with the test profile profile.json (profile-test.c).
 *   adapt_test CASE      runs one named case: "PASS CASE" or "FAIL CASE: why", exit 0/1
 *   adapt_test --list    the case names
 *   adapt_test utility   reads "KIND T L SIGMA P" lines, prints U (%.17g) or EINVAL per line
 *   adapt_test best      reads "KIND CLASS P" lines, prints "W U" of the choice per line
 * The last two let tests/test_adapt_host.py compare against tools/profit's Python. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nom/adapt.h>
#include <nom/sched.h>

#include "check.h"
#include "fake_nom.h"

static const struct nom_adapt_profile *prof = &nom_adapt_profile;

/* Starts the controller with the given options (a NULL-terminated list after argv[0]). */
static int start_with(const char *const *opts, int *argc_out)
{
    static char *argv[16];
    int argc = 0;
    argv[argc++] = "app";
    for (; *opts; opts++) { /* --batching-delay=US is the stack's (nom/net.h), as in a guest */
        if (strncmp(*opts, "--batching-delay=", 17) == 0)
            fake_fixed_w_us = strtol(*opts + 17, NULL, 10);
        else
            argv[argc++] = (char *)*opts;
    }
    argv[argc] = NULL;
    int r = nom_adapt_start(&argc, argv, prof);
    if (argc_out)
        *argc_out = argc;
    return r;
}

static struct nom_adapt_status status(void)
{
    struct nom_adapt_status st;
    nom_adapt_status(&st);
    return st;
}

/* Q: do hand-computed values of eq. 2-4 come out (tools/profit/tests use the same)? */
static int case_utility_hand_values(void)
{
    struct nom_utility_params p = nom_utility_defaults();
    double u;
    /* Refund: 1 Gbit/s at 500 us: alpha - beta L = 20 - 5 = 15; minus P = 1 -> 14 $/s. */
    CHECK(nom_utility(NOM_UTILITY_REFUND, &p, 1.0, 500, 0, 1.0, &u) == 0 && fabs(u - 14) < 1e-12);
    /* Refund caps at 0: 3 ms would refund 30 > alpha; only the price remains. */
    CHECK(nom_utility(NOM_UTILITY_REFUND, &p, 2.0, 3000, 0, 10.0, &u) == 0 && u == -20.0);
    /* Bonus: 0.01 / 100 us = 100 $/Gbit on top of alpha: 0.5 x (20 + 100 - 10) = 55. */
    CHECK(nom_utility(NOM_UTILITY_BONUS, &p, 0.5, 100, 0, 10.0, &u) == 0 && fabs(u - 55) < 1e-9);
    /* Penalty: latency at the SLO with jitter: N = 1/2, X N = 50 >= 1, all penalty: -T P. */
    CHECK(nom_utility(NOM_UTILITY_PENALTY, &p, 1.0, 750, 10, 1.0, &u) == 0 && u == -1.0);
    /* Penalty without jitter below the SLO: N = 0, T (alpha - P). */
    CHECK(nom_utility(NOM_UTILITY_PENALTY, &p, 1.0, 100, 0, 1.0, &u) == 0 && u == 19.0);
    return 0;
}

/* Q: are the arguments the Python rejects rejected (-EINVAL) too? */
static int case_utility_rejects(void)
{
    struct nom_utility_params p = nom_utility_defaults();
    double u;
    CHECK(nom_utility(NOM_UTILITY_PENALTY, &p, -1, 100, 0, 1, &u) == -EINVAL);
    CHECK(nom_utility(NOM_UTILITY_PENALTY, &p, NAN, 100, 0, 1, &u) == -EINVAL);
    CHECK(nom_utility(NOM_UTILITY_PENALTY, &p, 1, 100, -1, 1, &u) == -EINVAL);
    CHECK(nom_utility(NOM_UTILITY_REFUND, &p, 1, NAN, 0, 1, &u) == -EINVAL);
    CHECK(nom_utility(NOM_UTILITY_BONUS, &p, 1, 0, 0, 1, &u) == -EINVAL);
    CHECK(nom_utility((enum nom_utility_kind)7, &p, 1, 100, 0, 1, &u) == -EINVAL);
    return 0;
}

/* Q: does the test profile pass the check, and is each kind of bad data refused with a reason? */
static int case_profile_check(void)
{
    char why[160];
    CHECK(nom_adapt_profile_check(prof, why, sizeof why) == 0);
    struct nom_adapt_point many[2] = {{0, 1, 1, 100, 1}, {10, 1, 1, 100, 1}};
    struct nom_adapt_point single[2] = {{0, 1, 1, 100, 1}, {10, 1, 1, 100, 1}};
    struct nom_adapt_profile bad = {"bad", "test", 2, {many, single}};
    CHECK(nom_adapt_profile_check(&bad, why, sizeof why) == 0);
    single[1].latency_us = NAN;
    CHECK(nom_adapt_profile_check(&bad, why, sizeof why) == -EINVAL);
    CHECK(strstr(why, "single[1].latency_us") != NULL);
    single[1].latency_us = 0;
    CHECK(nom_adapt_profile_check(&bad, why, sizeof why) == -EINVAL && strstr(why, "> 0"));
    single[1].latency_us = 100;
    many[1].t_gbps = -1;
    CHECK(nom_adapt_profile_check(&bad, why, sizeof why) == -EINVAL && strstr(why, "many[1]"));
    many[1].t_gbps = 1;
    many[1].w_us = 0;
    CHECK(nom_adapt_profile_check(&bad, why, sizeof why) == -EINVAL &&
          strstr(why, "strictly increasing"));
    many[1].w_us = 10;
    single[1].w_us = 20;
    CHECK(nom_adapt_profile_check(&bad, why, sizeof why) == -EINVAL && strstr(why, "has W 20"));
    single[1].w_us = 2000000;
    CHECK(nom_adapt_profile_check(&bad, why, sizeof why) == -EINVAL && strstr(why, "above"));
    single[1].w_us = 10;
    bad.points[NOM_LOAD_SINGLE] = NULL;
    CHECK(nom_adapt_profile_check(&bad, why, sizeof why) == -EINVAL && strstr(why, "single"));
    bad.points[NOM_LOAD_SINGLE] = single;
    bad.npoints = 0;
    CHECK(nom_adapt_profile_check(&bad, why, sizeof why) == -EINVAL && strstr(why, "points"));
    CHECK(nom_adapt_profile_check(NULL, why, sizeof why) == -EINVAL);
    return 0;
}

/* Q: does a tie go to the lowest W (an all-zero utility: nothing to gain from batching)? */
static int case_best_tie_lowest_w(void)
{
    struct nom_adapt_point pts[3] = {{0, 0, 0, 100, 1}, {5, 0, 0, 200, 1}, {9, 0, 0, 300, 1}};
    struct nom_adapt_profile zero = {"zero", "test", 3, {pts, pts}};
    struct nom_utility_params p = nom_utility_defaults();
    double rate = -1;
    CHECK(nom_adapt_best(&zero, NOM_LOAD_MANY, NOM_UTILITY_PENALTY, &p, 5, &rate) == 0);
    CHECK(rate == 0);
    return 0;
}

/* Q: does the meter switch only after NOM_ADAPT_VOTES consecutive votes, ignore the dead band,
 * and restart counting when a vote is interrupted? */
static int case_meter_hysteresis(void)
{
    struct nom_load_meter m;
    nom_load_meter_init(&m, NOM_LOAD_SINGLE);
    CHECK(nom_load_meter_sample(&m, 32) == 0 && m.cls == NOM_LOAD_SINGLE);
    CHECK(nom_load_meter_sample(&m, 32) == 1 && m.cls == NOM_LOAD_MANY);
    CHECK(nom_load_meter_sample(&m, 2) == 0 && nom_load_meter_sample(&m, 3) == 0);
    CHECK(nom_load_meter_sample(&m, 2) == 0 && m.cls == NOM_LOAD_MANY); /* dead band */
    CHECK(nom_load_meter_sample(&m, 1) == 0);
    CHECK(nom_load_meter_sample(&m, 4) == 0); /* interrupted: start again */
    CHECK(nom_load_meter_sample(&m, 0) == 0 && m.cls == NOM_LOAD_MANY);
    CHECK(nom_load_meter_sample(&m, 1) == 1 && m.cls == NOM_LOAD_SINGLE);
    return 0;
}

/* Q: does the controller pick the profile's best W at start, re-pick on a price notification,
 * report W, price and rate on the board, and take its options out of argv? */
static int case_controller_price(void)
{
    fake_reset();
    fake_publish(1.0);
    int argc;
    CHECK(start_with((const char *[]){"--utility=penalty", "-p", "80", NULL}, &argc) == 0);
    CHECK(argc == 3);
    struct nom_adapt_status st = status();
    CHECK(st.started && st.adaptive && st.load == NOM_LOAD_SINGLE && st.w_us == 0);
    CHECK(fake_report.subscribe_prices == 1 && fake_report.price_seen_micro == 1000000);
    /* single at 1 $/Gbit: W=0, U = 0.005 (20 - 1) = 0.095 $/s. */
    CHECK(fake_report.profit_rate_micro == 95000 && fake_report.batching_delay_ns == 0);
    fake_conns = 32;
    CHECK(fake_sample() && fake_sample());
    st = status();
    CHECK(st.load == NOM_LOAD_MANY && st.w_us == 40 && fake_w_us == 40);
    CHECK(fake_report.batching_delay_ns == 40000);
    fake_publish(10.0);
    CHECK(fake_notify(NOM_NOTIFY_PRICE));
    st = status();
    CHECK(st.w_us == 10 && fake_w_us == 10 && st.price == 10.0 && st.has_rate);
    CHECK(fake_report.price_seen_micro == 10000000 && st.w_changes == 2);
    CHECK(strstr(fake_console, "adapt: W=10 us (price: load many") != NULL);
    return 0;
}

/* Q: is a price change caught at the next sample even without a notification, and does an
 * unrelated notification bit change nothing? */
static int case_controller_missed_notification(void)
{
    fake_reset();
    CHECK(start_with((const char *[]){NULL}, NULL) == 0);
    struct nom_adapt_status st = status();
    CHECK(!st.has_price && st.price == 0 && st.utility == NOM_UTILITY_PENALTY);
    uint64_t decisions = st.decisions;
    CHECK(fake_notify(0x2) && status().decisions == decisions);
    fake_publish(3.0);
    CHECK(fake_sample());
    st = status();
    CHECK(st.has_price && st.price == 3.0 && st.decisions == decisions + 1);
    return 0;
}

/* Q: with --batching-delay, does W stay fixed through price and load changes while the rate is
 * still reported, and is the rate absent for a W the profile lacks? */
static int case_controller_fixed(void)
{
    fake_reset();
    fake_publish(1.0);
    CHECK(start_with((const char *[]){"--batching-delay=20", "--utility=refund", NULL}, NULL)
          == 0);
    struct nom_adapt_status st = status();
    CHECK(!st.adaptive && st.w_us == 20 && fake_w_us == 20 && st.has_rate);
    /* refund, single, W=20: 0.004 x (20 - 10 x 130/1000 - 1) = 0.0708 $/s. */
    CHECK(fake_report.profit_rate_micro == 70800);
    fake_conns = 10;
    fake_sample();
    fake_sample();
    fake_publish(10.0);
    fake_notify(NOM_NOTIFY_PRICE);
    st = status();
    CHECK(st.load == NOM_LOAD_MANY && st.w_us == 20 && fake_w_us == 20 && st.w_changes == 0);
    fake_reset();
    CHECK(start_with((const char *[]){"--batching-delay=7", NULL}, NULL) == -EALREADY);
    return 0;
}

/* Q: with a stack that counts requests in flight, is the load class voted on them and not on
 * connections: 32 open connections with one request at a time stay "single", 8 requests in
 * flight on one connection are "many", and does --adapt-trace print each sample's signals? */
static int case_controller_load_from_requests(void)
{
    fake_reset();
    fake_count_in_flight();
    fake_publish(1.0);
    CHECK(start_with((const char *[]){"--adapt-trace", NULL}, NULL) == 0);
    fake_conns = 32;
    fake_in_flight = 1;
    CHECK(fake_sample() && fake_sample());
    struct nom_adapt_status st = status();
    CHECK(st.load == NOM_LOAD_SINGLE && st.w_us == 0 && st.concurrency == 1);
    CHECK(st.active_conns == 32 && st.in_flight == 1.0);
    fake_conns = 1;
    fake_in_flight = 8;
    CHECK(fake_sample() && status().load == NOM_LOAD_SINGLE); /* one vote */
    CHECK(fake_sample());
    st = status();
    CHECK(st.load == NOM_LOAD_MANY && st.w_us == 40 && st.concurrency == 8);
    CHECK(strstr(fake_console, "adapt-load: conns=1 in_flight=8.000 snapshots=10 "
                               "concurrency=8 class=many") != NULL);
    fake_in_flight = 0;
    CHECK(fake_sample() && fake_sample() && status().load == NOM_LOAD_SINGLE);
    return 0;
}

/* Q: with --adapt-knob=idle-poll, does online mode start (implied) with libnom's default idle
 * poll budget set and say it on the console, and is another knob name refused? */
static int case_controller_idle_poll_knob(void)
{
    fake_reset();
    fake_publish(1.0);
    CHECK(start_with((const char *[]){"--adapt-knob=ring", NULL}, NULL) == -EINVAL);
    CHECK(start_with((const char *[]){"--adapt-knob=idle-poll", NULL}, NULL) == 0);
    struct nom_adapt_status st = status();
    CHECK(st.online && st.idle_poll_us == NOM_IDLE_POLL_US_DEFAULT);
    CHECK(fake_idle_poll_us == NOM_IDLE_POLL_US_DEFAULT);
    CHECK(strstr(fake_console, "online penalty expected 0 u$/s) idle-poll 50 us\n") != NULL);
    return 0;
}

/* The controller is started once per process (its state is the application's): the cases that
 * start it run in their own process, so each begins from a fresh state. */
static int case_controller_bad_options(void)
{
    fake_reset();
    CHECK(start_with((const char *[]){"--utility=greed", NULL}, NULL) == -EINVAL);
    CHECK(start_with((const char *[]){"--batching-delay=2000000", NULL}, NULL) == -EINVAL);
    fake_fixed_w_us = -1;
    CHECK(start_with((const char *[]){"--adapt", "--batching-delay=5", NULL}, NULL) == -EINVAL);
    fake_fixed_w_us = -1;
    fake_net_up = 0;
    CHECK(start_with((const char *[]){"--adapt", NULL}, NULL) == -ENODEV);
    CHECK(!status().started);
    fake_net_up = 1;
    nom_adapt_stack_register(NULL); /* no stack has registered its knob */
    CHECK(start_with((const char *[]){"--adapt", NULL}, NULL) == -ENODEV);
    CHECK(!status().started);
    fake_reset();
    CHECK(start_with((const char *[]){"--adapt", "--utility=bonus", NULL}, NULL) == 0);
    CHECK(status().utility == NOM_UTILITY_BONUS);
    return 0;
}

/* Q: is a bad profile refused at start with its reason? */
static int case_controller_bad_profile(void)
{
    struct nom_adapt_point pts[1] = {{0, 1, 1, -5, 1}};
    fake_reset();
    prof = &(struct nom_adapt_profile){"bad", "test", 1, {pts, pts}};
    CHECK(start_with((const char *[]){NULL}, NULL) == -EINVAL);
    CHECK(!status().started);
    return 0;
}

static const struct {
    const char *name;
    int (*fn)(void);
} cases[] = {
    { "utility_hand_values", case_utility_hand_values },
    { "utility_rejects", case_utility_rejects },
    { "profile_check", case_profile_check },
    { "best_tie_lowest_w", case_best_tie_lowest_w },
    { "meter_hysteresis", case_meter_hysteresis },
    { "controller_price", case_controller_price },
    { "controller_missed_notification", case_controller_missed_notification },
    { "controller_fixed", case_controller_fixed },
    { "controller_load_from_requests", case_controller_load_from_requests },
    { "controller_idle_poll_knob", case_controller_idle_poll_knob },
    { "controller_bad_options", case_controller_bad_options },
    { "controller_bad_profile", case_controller_bad_profile },
};
CHECK_CASES(cases)

static int kind_of(const char *s, enum nom_utility_kind *k)
{
    return nom_utility_parse(s, k);
}

static int run_utility_lines(void)
{
    char kind[16];
    double t, l, j, price, u;
    struct nom_utility_params p = nom_utility_defaults();
    enum nom_utility_kind k;
    while (scanf("%15s %lf %lf %lf %lf", kind, &t, &l, &j, &price) == 5) {
        if (kind_of(kind, &k) == 0 && nom_utility(k, &p, t, l, j, price, &u) == 0)
            printf("%.17g\n", u);
        else
            printf("EINVAL\n");
    }
    return 0;
}

static int run_best_lines(void)
{
    char kind[16], cls[16];
    double price, rate;
    struct nom_utility_params p = nom_utility_defaults();
    enum nom_utility_kind k;
    while (scanf("%15s %15s %lf", kind, cls, &price) == 3) {
        enum nom_load_class c = strcmp(cls, "many") == 0 ? NOM_LOAD_MANY : NOM_LOAD_SINGLE;
        int i = kind_of(kind, &k) == 0 ? nom_adapt_best(prof, c, k, &p, price, &rate) : -1;
        if (i < 0)
            printf("EINVAL\n");
        else
            printf("%u %.17g\n", (unsigned)prof->points[c][i].w_us, rate);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "utility") == 0)
        return run_utility_lines();
    if (argc == 2 && strcmp(argv[1], "best") == 0)
        return run_best_lines();
    return check_cases_main(argc, argv);
}
