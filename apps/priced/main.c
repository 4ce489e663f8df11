/* main.c: priced, nom's price daemon (paper 3.7; README.md). It polls the cloud provider's
 * price.txt over HTTP on its own NIC and, whenever the price or the provider's sequence
 * changes, publishes it in bulletin-board price slot 0 with NOM_SYS_PRICE_PUBLISH; the kernel
 * then notifies every subscribed application (NOM_NOTIFY_PRICE). Bad input loses nothing: a
 * failed poll leaves the last good price published, marked NOM_PRICE_STALE with the time of
 * the last good answer (one publication per episode), is reported once per episode (retry.h)
 * and is retried with backoff; the next good answer publishes a fresh price. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nom/bb.h>
#include <nom/net.h>
#include <nom/price.h>
#include <nom/sched.h>
#include <nom/syscall.h>
#include <nom/time.h>

#include "http_client.h"
#include "options.h"
#include "retry.h"

#define PRICE_SLOT 0
/* A failure kind beyond enum http_failure's: the answer was HTTP 200 but its price was not
 * acceptable (malformed, negative, absurd). */
#define FAIL_PRICE (HTTP_FAIL_STATUS + 1)

static const char *const failure_names[] = {
    [HTTP_FAIL_UNREACHABLE] = "provider unreachable",
    [HTTP_FAIL_TIMEOUT] = "provider too slow",
    [HTTP_FAIL_PROTOCOL] = "bad answer from the provider",
    [HTTP_FAIL_STATUS] = "provider error",
    [FAIL_PRICE] = "price rejected",
};

struct priced {
    struct priced_options opt;
    struct retry retry;
    int published;           /* a price is on the board */
    int stale;               /* ... marked NOM_PRICE_STALE: the provider has failed since */
    uint64_t last_good_tsc;  /* the provider's last good answer */
    struct nom_price_quote last; /* the one published */
};

static double seconds_since_boot(void)
{
    return (double)nom_now_ns() / 1e9;
}

/* One exchange with the provider: 0 with the quote in *q, or a failure kind and why. */
static int poll_provider(const struct priced_options *o, struct nom_price_quote *q, char *why,
                         size_t whylen)
{
    static struct http_response resp; /* 8 KiB of buffers: not on the stack */
    enum http_failure f = http_get(&o->url, o->timeout_ms, &resp, why, whylen);
    if (f != HTTP_OK)
        return (int)f;
    if (nom_price_text_parse(resp.body, resp.body_len, o->max_price_micro, q, why, whylen) != 0)
        return FAIL_PRICE;
    return 0;
}

/* Publishes q in the bandwidth slot, marked stale or not; the kernel notifies the
 * subscribers. Exits if the kernel refuses: without publishing, priced has no purpose. */
static void publish(struct priced *d, const struct nom_price_quote *q, int stale)
{
    struct nom_bb_price p = {.resource = NOM_RES_BANDWIDTH, .unit = NOM_UNIT_GBIT,
                             .price_micro = q->price_micro, .timestamp_ns = q->timestamp_ns,
                             .flags = stale ? NOM_PRICE_STALE : 0,
                             .stale_since_tsc = stale ? d->last_good_tsc : 0};
    char buf[32];
    int64_t r = nom_sys_price_publish(PRICE_SLOT, &p);
    if (r < 0) {
        printf("priced: the kernel refused to publish (error %lld)%s\n", (long long)-r,
               r == -NOM_EPERM ? ": start priced with the nom.price-publisher module flag" : "");
        exit(1);
    }
    nom_bb_price(PRICE_SLOT, &p);
    printf("priced: published %s $/Gbit%s at %.6f s (provider sequence %llu, board sequence "
           "%llu)\n", nom_price_format(q->price_micro, buf, sizeof buf), stale ? " (stale)" : "",
           seconds_since_boot(), (unsigned long long)q->sequence, (unsigned long long)p.sequence);
    d->last = *q;
    d->published = 1;
    d->stale = stale;
}

static void report_failure(const struct priced *d, int kind, const char *why)
{
    char buf[32];
    if (d->published)
        printf("priced: %s: %s; keeping %s $/Gbit, retrying with backoff (up to %u ms)\n",
               failure_names[kind], why, nom_price_format(d->last.price_micro, buf, sizeof buf),
               d->opt.max_backoff_ms);
    else
        printf("priced: %s: %s; nothing published yet, retrying with backoff (up to %u ms)\n",
               failure_names[kind], why, d->opt.max_backoff_ms);
}

/* One poll and what follows from it. */
static void poll_once(struct priced *d)
{
    char why[160];
    struct nom_price_quote q;
    int kind = poll_provider(&d->opt, &q, why, sizeof why);
    if (kind != 0) {
        if (retry_failed(&d->retry, kind))
            report_failure(d, kind, why);
        /* The last good price stays, marked stale once per episode: the applications fall
         * back to their safe W instead of trusting it (nom/adapt.h). */
        if (d->published && !d->stale)
            publish(d, &d->last, 1);
        return;
    }
    d->last_good_tsc = nom_tsc();
    unsigned ended = retry_succeeded(&d->retry);
    if (ended)
        printf("priced: the provider answers again (after %u failed polls)\n", ended);
    if (!d->published || d->stale || q.price_micro != d->last.price_micro ||
        q.sequence != d->last.sequence)
        publish(d, &q, 0);
}

static int start_network(int *argc, char **argv)
{
    int r = nom_net_start(argc, argv);
    if (r == -ETIMEDOUT) {
        /* The stack keeps asking for a lease; polls fail as "unreachable" until it has one. */
        printf("priced: no DHCP lease yet; polling anyway\n");
        return 0;
    }
    if (r != 0)
        printf("priced: cannot start the network: %s\n", strerror(-r));
    return r;
}

int main(int argc, char **argv)
{
    static struct priced d;
    char why[160];
    setvbuf(stdout, NULL, _IOLBF, 0);
    int r = priced_options_parse(argc, argv, &d.opt, why, sizeof why);
    if (r != OPTIONS_OK) {
        /* One write: stderr is unbuffered, and applications sharing a vCPU may interleave
         * their console output between writes. */
        char msg[512]; /* the usage (about 250 bytes) and a reason */
        snprintf(msg, sizeof msg, "%s%s%s%s", r == OPTIONS_BAD ? "priced: " : "",
                 r == OPTIONS_BAD ? why : "", r == OPTIONS_BAD ? "\n" : "", priced_usage);
        fputs(msg, r == OPTIONS_HELP ? stdout : stderr);
        return r == OPTIONS_HELP ? 0 : 2;
    }
    if (start_network(&argc, argv) != 0)
        return 1;
    retry_init(&d.retry, d.opt.period_ms, d.opt.max_backoff_ms);
    printf("priced: polling %s every %u ms (timeout %u ms), publishing price slot %d\n",
           d.opt.provider, d.opt.period_ms, d.opt.timeout_ms, PRICE_SLOT);
    for (;;) {
        uint64_t start = nom_tsc();
        poll_once(&d);
        nom_sleep_until(start + nom_us_to_tsc((uint64_t)retry_delay_ms(&d.retry) * 1000));
    }
}
