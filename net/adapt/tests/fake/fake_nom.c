/* fake_nom.c: host stand-ins for what net/adapt's controller calls on nom (fake_nom.h): a
 * one-timer "clock" the test advances, the notification handler, price slot 0 of the board,
 * the stack's W and connection count, the app report and the console. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include <nom/bb.h>
#include <nom/net.h>
#include <nom/sched.h>
#include <nom/syscall.h>
#include <nom/time.h>

#include "conns.h"
#include "fake_nom.h"

struct nom_bb_price fake_price;
struct nom_bb_app_report fake_report;
unsigned fake_reports, fake_conns, fake_w_sets;
int fake_net_up;
uint32_t fake_w_us;
char fake_console[8192];

static struct nom_timer *armed;
static void (*notify_fn)(uint64_t, void *);
static void *notify_arg;

void fake_reset(void)
{
    memset(&fake_price, 0, sizeof fake_price);
    memset(&fake_report, 0, sizeof fake_report);
    fake_reports = fake_conns = fake_w_sets = 0;
    fake_net_up = 1;
    fake_w_us = 0;
    fake_console[0] = '\0';
    armed = NULL;
    notify_fn = NULL;
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

int fake_notify(uint64_t bits)
{
    if (notify_fn == NULL)
        return 0;
    notify_fn(bits, notify_arg);
    return 1;
}

/* libnom */
int nom_bb_price(unsigned slot, struct nom_bb_price *out)
{
    if (slot >= NOM_BB_MAX_PRICES)
        return -1;
    if (slot == 0)
        *out = fake_price;
    else
        memset(out, 0, sizeof *out);
    return 0;
}
void nom_preempt_disable(void) {}
void nom_preempt_enable(void) {}
void nom_notify_handler_set(void (*fn)(uint64_t, void *), void *arg)
{
    notify_fn = fn;
    notify_arg = arg;
}
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

/* net/ */
int nom_net_set_batching_delay_us(uint32_t us)
{
    if (!fake_net_up)
        return -ENODEV;
    if (us > 1000000)
        return -EINVAL;
    fake_w_us = us;
    fake_w_sets++;
    return 0;
}
uint32_t nom_net_batching_delay_us(void) { return fake_net_up ? fake_w_us : 0; }
unsigned adapt_active_conns(void) { return fake_conns; }
