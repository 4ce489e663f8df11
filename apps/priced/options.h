/*
 * options.h: priced's command line (README.md lists it). Pure code, host-tested.
 *
 *   --provider=http://A.B.C.D[:PORT]/PATH   the provider's price.txt (required)
 *   --period-ms=MS        poll period, 10..3600000, default 1000
 *   --timeout-ms=MS       deadline of one exchange, 10..60000, default 2000
 *   --max-backoff-ms=MS   longest retry delay after failures, >= period, default 16000
 *   --max-price=USD       sanity limit in $/Gbit; a higher quote is rejected; default 1000
 *   --help
 * net/'s options (--nic= --ip= --gw= --batching-delay= --idle-poll-us= --no-csum-offload,
 * nom/net.h) pass through untouched: nom_net_start() takes them afterwards.
 */
#ifndef PRICED_OPTIONS_H
#define PRICED_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "http_client.h"

/* Why these defaults: a price changes seldom (the paper's experiment changes it once a
 * minute), and an application only profits from reacting within a small fraction of that,
 * so one poll a second (about 1/60 of a phase of delay on average, 1/120) is plenty; it is a
 * TCP connection and two short segments a second, a negligible share of the vCPU priced may
 * share with the application it serves. The timeout is two periods' worth: a provider slower
 * than that is treated as down. Backoff caps at 16 s so a provider that comes back is seen
 * within 16 s while a dead one costs one connection attempt per 16 s. The price limit is
 * 50 times the paper's valuation of bandwidth (alpha = 20 $/Gbit): beyond it a quote is far
 * more likely a provider bug than a price. */
#define PRICED_DEFAULT_PERIOD_MS 1000u
#define PRICED_DEFAULT_TIMEOUT_MS 2000u
#define PRICED_DEFAULT_MAX_BACKOFF_MS 16000u
#define PRICED_DEFAULT_MAX_PRICE_MICRO 1000000000ll /* 1000 $/Gbit */

struct priced_options {
    const char *provider; /* the URL as given */
    struct http_url url;
    uint32_t period_ms, timeout_ms, max_backoff_ms;
    int64_t max_price_micro;
};

enum { OPTIONS_OK = 0, OPTIONS_HELP = 1, OPTIONS_BAD = -1 };

extern const char priced_usage[];

/* Parses argv (argv[0] is the program) into *o. OPTIONS_OK, OPTIONS_HELP (--help given), or
 * OPTIONS_BAD with a one-line reason in why (unknown option, malformed or out-of-range value,
 * no --provider). */
int priced_options_parse(int argc, char *const *argv, struct priced_options *o, char *why,
                         size_t whylen);

#endif /* PRICED_OPTIONS_H */
