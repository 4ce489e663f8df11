/* price.c: the subscribers' side of priced (nom/price.h): read the bandwidth price from the
 * bulletin board, subscribe to NOM_NOTIFY_PRICE, wait for or be called on a change. */
#include <errno.h>

#include <nom/bb.h>
#include <nom/price.h>
#include <nom/sched.h>
#include <nom/syscall.h>

static struct nom_waitq changed_wq = NOM_WAITQ_INIT;
static volatile uint64_t notifications;
static void (*change_fn)(const struct nom_price *, void *);
static void *change_arg;

int nom_price_bandwidth(struct nom_price *out)
{
    /* Slot by slot: each copy is consistent (seqlock), and one slot is one publication. */
    for (unsigned i = 0; i < NOM_BB_MAX_PRICES; i++) {
        struct nom_bb_price p;
        nom_bb_price(i, &p);
        if (nom_price_from_slots(&p, 1, out) == 0)
            return 0;
    }
    return -ENOENT;
}

/* libnom's notification handler (scheduler context). */
static void on_notify(uint64_t bits, void *unused)
{
    (void)unused;
    if (!(bits & NOM_NOTIFY_PRICE))
        return;
    notifications++;
    nom_waitq_wake_all(&changed_wq);
    struct nom_price now;
    if (change_fn && nom_price_bandwidth(&now) == 0)
        change_fn(&now, change_arg);
}

int nom_price_subscribe(void (*on_change)(const struct nom_price *now, void *arg), void *arg)
{
    struct nom_bb_app row;
    struct nom_bb_app_report report = {0};
    if (nom_bb_app(nom_self_id(), &row) == 0)
        report = row.report; /* keep what the application reported so far */
    report.subscribe_prices = 1;
    nom_preempt_disable(); /* the handler must not see a half-set callback */
    change_fn = on_change;
    change_arg = arg;
    nom_notify_handler_set(on_notify, NULL);
    nom_preempt_enable();
    return nom_sys_app_report(&report) < 0 ? -EINVAL : 0;
}

uint64_t nom_price_notifications(void)
{
    return notifications;
}

int nom_price_wait(uint64_t after_sequence, uint64_t deadline_tsc, struct nom_price *out)
{
    int r = 0;
    /* Checking and waiting with preemption off cannot miss the handler's wake-up (sched.h). */
    nom_preempt_disable();
    while (nom_price_bandwidth(out) != 0 || out->sequence <= after_sequence) {
        if (nom_waitq_wait(&changed_wq, deadline_tsc) == -ETIMEDOUT) {
            r = nom_price_bandwidth(out) == 0 && out->sequence > after_sequence ? 0 : -ETIMEDOUT;
            break;
        }
    }
    nom_preempt_enable();
    return r;
}
