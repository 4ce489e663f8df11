/* fake_nom.c: host stand-ins for what libnom's controller calls on nom (fake_nom.h): a
 * one-timer "clock" the test advances, the price subscription (nom/price.h) over price slot 0,
 * a registered stack's W, connection count and requests in flight, the app report and the
 * console. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include <nom/adapt.h>
#include <nom/price.h>
#include <nom/sched.h>
#include <nom/syscall.h>
#include <nom/time.h>

#include "fake_nom.h"

struct nom_bb_price fake_price;
struct nom_bb_app_report fake_report;
unsigned fake_reports, fake_conns, fake_in_flight, fake_w_sets;
uint64_t fake_idle_poll_us;
int fake_net_up;
uint32_t fake_w_us;
char fake_console[8192];

static struct nom_timer *armed;
static void (*change_fn)(const struct nom_price *, void *);
static void *change_arg;

/* The stack (nom/adapt.h's struct nom_adapt_stack) */
static int fake_set_w(uint32_t us)
{
    if (!fake_net_up)
        return -ENODEV;
    if (us > 1000000)
        return -EINVAL;
    fake_w_us = us;
    fake_w_sets++;
    return 0;
}
static uint32_t fake_get_w(void) { return fake_net_up ? fake_w_us : 0; }
static unsigned fake_active_conns(void) { return fake_conns; }
long fake_fixed_w_us = -1;
static long fake_fixed(void) { return fake_fixed_w_us; }
static void fake_counters(struct nom_adapt_counters *out) { *out = (struct nom_adapt_counters){0}; }
static const struct nom_adapt_stack fake_stack = {
    .active_conns = fake_active_conns,
    .set_batching_delay_us = fake_set_w,
    .batching_delay_us = fake_get_w,
    .fixed_batching_delay_us = fake_fixed,
    .counters = fake_counters,
};
static unsigned fake_requests_in_flight(void) { return fake_in_flight; }
static const struct nom_adapt_stack fake_counting_stack = {
    .active_conns = fake_active_conns,
    .requests_in_flight = fake_requests_in_flight,
    .set_batching_delay_us = fake_set_w,
    .batching_delay_us = fake_get_w,
    .fixed_batching_delay_us = fake_fixed,
    .counters = fake_counters,
};

void fake_count_in_flight(void)
{
    nom_adapt_stack_register(&fake_counting_stack);
}

void fake_reset(void)
{
    memset(&fake_price, 0, sizeof fake_price);
    memset(&fake_report, 0, sizeof fake_report);
    fake_reports = fake_conns = fake_in_flight = fake_w_sets = 0;
    fake_idle_poll_us = 0;
    fake_net_up = 1;
    fake_w_us = 0;
    fake_fixed_w_us = -1;
    fake_console[0] = '\0';
    armed = NULL;
    change_fn = NULL;
    nom_adapt_stack_register(&fake_stack);
}

void fake_publish(double usd)
{
    fake_price.resource = NOM_RES_BANDWIDTH;
    fake_price.unit = NOM_UNIT_GBIT;
    fake_price.price_micro = llround(usd * 1e6);
    fake_price.sequence++;
}

int fake_fire_timer(void)
{
    struct nom_timer *t = armed;
    if (t == NULL)
        return 0;
    armed = NULL;
    t->fn(t->arg);
    return 1;
}

int fake_sample(void)
{
    for (unsigned i = 0; i < NOM_ADAPT_SAMPLE_MS / NOM_ADAPT_SNAPSHOT_MS; i++) {
        if (!fake_fire_timer())
            return 0;
    }
    return 1;
}

/* What nom/price.h's subscription does on a notification: price bits only, the callback if subscribed. */
int fake_notify(uint64_t bits)
{
    struct nom_price now;
    if (change_fn == NULL)
        return 0;
    if ((bits & NOM_NOTIFY_PRICE) && nom_price_bandwidth(&now) == 0)
        change_fn(&now, change_arg);
    return 1;
}

/* The price subscription (nom/price.h) */
int nom_price_bandwidth(struct nom_price *out)
{
    if (fake_price.resource != NOM_RES_BANDWIDTH || fake_price.unit != NOM_UNIT_GBIT)
        return -ENOENT;
    *out = (struct nom_price){.usd_per_gbit = (double)fake_price.price_micro / 1e6,
                              .micro_per_gbit = fake_price.price_micro,
                              .sequence = fake_price.sequence};
    return 0;
}
int nom_price_subscribe(void (*on_change)(const struct nom_price *, void *), void *arg)
{
    change_fn = on_change;
    change_arg = arg;
    fake_report.subscribe_prices = 1;
    return 0;
}

/* libnom */
void nom_sched_set_idle_poll_us(uint64_t us) { fake_idle_poll_us = us; }
void nom_preempt_disable(void) {}
void nom_preempt_enable(void) {}
void nom_timer_add(struct nom_timer *t, uint64_t deadline, void (*fn)(void *), void *arg)
{
    t->deadline = deadline;
    t->fn = fn;
    t->arg = arg;
    armed = t;
}
uint64_t nom_us_to_tsc(uint64_t us) { return us; }
int64_t nom_sys_app_report(const struct nom_bb_app_report *report)
{
    fake_report = *report;
    fake_reports++;
    return 0;
}
int64_t nom_sys_console_write(const char *buf, uint64_t len)
{
    size_t used = strlen(fake_console);
    if (used + len < sizeof fake_console) {
        memcpy(fake_console + used, buf, len);
        fake_console[used + len] = '\0';
    }
    return (int64_t)len;
}
