/* ipc: notifications, timers and prices between applications.
 *   ipc wait        registers an upcall handler, arms a 100 ms timer and subscribes to prices;
 *                   waits for the timer upcall, a notification and a price notification.
 *   ipc take        the same, blocking as libnom does (upcalls held, block given an events
 *                   pointer): the events come back from block, none as an upcall; and block
 *                   with an events pointer it cannot write fails with -EFAULT.
 *   ipc send ID     notifies application ID with bits 0x50, then tries to publish a price
 *                   (refused: it is not the publisher).
 *   ipc publish     (started with nom.price-publisher) publishes 10 $/Gbit in slot 0. */
#include "ktest.h"

static uint8_t upcall_stack[8192] __attribute__((aligned(16)));
static struct nom_upcall_ctl ctl;
static volatile uint64_t timer_upcalls, notify_bits;

void on_upcall(struct nom_upcall_frame *f) {
    if (f->type == NOM_UPCALL_TIMER)
        timer_upcalls++;
    else if (f->type == NOM_UPCALL_NOTIFY)
        notify_bits |= f->arg0;
    SYS(NOM_SYS_UPCALL_RETURN, f);
}

static int wait_mode(void) {
    SYS(NOM_SYS_UPCALL_REGISTER, on_upcall, upcall_stack + sizeof upcall_stack, &ctl);
    struct nom_bb_app_report rep = {.batching_delay_ns = 5000, .subscribe_prices = 1};
    SYS(NOM_SYS_APP_REPORT, &rep);
    SYS(NOM_SYS_TIMER_SET, kt_rdtsc() + kt_tsc_hz() / 10);
    uint64_t deadline = kt_rdtsc() + kt_tsc_hz() * 20;
    while ((!timer_upcalls || (notify_bits & 0x51) != 0x51) && kt_rdtsc() < deadline)
        SYS(NOM_SYS_BLOCK, deadline);
    kt_printf("ipc-wait: timer upcalls %lu, notification bits %lx, price %ld micro$/Gbit seq %lu\n",
              timer_upcalls, notify_bits, BB->prices[0].price_micro, BB->prices[0].sequence);
    return timer_upcalls == 1 && (notify_bits & 0x51) == 0x51 ? 0 : 1;
}

static int take_mode(void) {
    SYS(NOM_SYS_UPCALL_REGISTER, on_upcall, upcall_stack + sizeof upcall_stack, &ctl);
    struct nom_bb_app_report rep = {.batching_delay_ns = 5000, .subscribe_prices = 1};
    SYS(NOM_SYS_APP_REPORT, &rep);
    ctl.disabled = 1;
    SYS(NOM_SYS_TIMER_SET, kt_rdtsc() + kt_tsc_hz() / 10);
    uint64_t deadline = kt_rdtsc() + kt_tsc_hz() * 20, timers = 0, bits = 0;
    struct nom_wake_events ev;
    while ((!timers || (bits & 0x51) != 0x51) && kt_rdtsc() < deadline) {
        if (SYS(NOM_SYS_BLOCK, deadline, &ev) < 0)
            break;
        timers += (ev.what & NOM_WAKE_DEADLINE) != 0;
        bits |= ev.what & NOM_WAKE_NOTIFY ? ev.notify_bits : 0;
    }
    int64_t bad = SYS(NOM_SYS_BLOCK, 1, 0x1000); /* deadline passed: writes at once */
    kt_printf("ipc-take: timers taken %lu, upcalls %lu, notification bits %lx, bad pointer %ld\n",
              timers, timer_upcalls + notify_bits, bits, bad);
    return timers == 1 && timer_upcalls + notify_bits == 0 && (bits & 0x51) == 0x51 &&
           bad == -NOM_EFAULT ? 0 : 1;
}

int ktest_main(int argc, char **argv, struct nom_start_info *info) {
    (void)info;
    const char *mode = argc > 1 ? argv[1] : "";
    if (!kt_strcmp(mode, "wait"))
        return wait_mode();
    if (!kt_strcmp(mode, "take"))
        return take_mode();
    struct nom_bb_price price = {.resource = NOM_RES_BANDWIDTH, .unit = NOM_UNIT_GBIT, .price_micro = 10000000};
    kt_sleep_ms(300);
    if (!kt_strcmp(mode, "send")) {
        int64_t r = SYS(NOM_SYS_NOTIFY, (uint32_t)kt_atou(argc > 2 ? argv[2] : "0"), 0x50);
        int64_t p = SYS(NOM_SYS_PRICE_PUBLISH, 0, &price);
        int64_t bad = SYS(NOM_SYS_NOTIFY, 999, 1);
        kt_printf("ipc-send: notify %ld, publish %ld, notify unknown app %ld\n", r, p, bad);
        return r == 0 && p == -NOM_EPERM && bad == -NOM_ENOENT ? 0 : 1;
    }
    kt_sleep_ms(300);
    int64_t p = SYS(NOM_SYS_PRICE_PUBLISH, 0, &price);
    int64_t bad = SYS(NOM_SYS_PRICE_PUBLISH, NOM_BB_MAX_PRICES, &price);
    kt_printf("ipc-publish: publish %ld, bad slot %ld\n", p, bad);
    return p == 0 && bad == -NOM_EINVAL ? 0 : 1;
}
