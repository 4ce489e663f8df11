/* options.c: parses priced's command line (options.h). */
#include <stdio.h>
#include <string.h>

#include <nom/price.h>

#include "options.h"

const char priced_usage[] =
    "usage: priced --provider=http://A.B.C.D[:PORT]/PATH [--period-ms=MS] [--timeout-ms=MS]\n"
    "              [--max-backoff-ms=MS] [--max-price=USD] [net options: --nic=N --ip=A/N"
    " --gw=A]\n";

/* net/'s own options, left in argv for nom_net_start() (nom/net.h). */
static const char *const net_options[] = {"--nic=", "--ip=", "--gw=", "--batching-delay=",
                                          "--idle-poll-us=", "--no-csum-offload"};

static int bad(char *why, size_t whylen, const char *what, const char *arg)
{
    snprintf(why, whylen, "%s: %s", arg, what);
    return OPTIONS_BAD;
}

/* A whole decimal number in [lo, hi]. */
static int parse_ms(const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
    uint64_t v = 0;
    if (*s == '\0')
        return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > hi)
            return -1;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    if (v < lo || v > hi)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

static int is_net_option(const char *arg)
{
    for (size_t i = 0; i < sizeof net_options / sizeof net_options[0]; i++)
        if (strncmp(arg, net_options[i], strlen(net_options[i])) == 0)
            return 1;
    return 0;
}

/* One argument: OPTIONS_OK, OPTIONS_HELP or OPTIONS_BAD. */
static int parse_one(const char *a, struct priced_options *o, char *why, size_t whylen)
{
    char url_why[96];
    if (strcmp(a, "--help") == 0)
        return OPTIONS_HELP;
    if (strncmp(a, "--provider=", 11) == 0) {
        o->provider = a + 11;
        if (http_url_parse(o->provider, &o->url, url_why, sizeof url_why) != 0)
            return bad(why, whylen, url_why, a);
    } else if (strncmp(a, "--period-ms=", 12) == 0) {
        if (parse_ms(a + 12, 10, 3600000, &o->period_ms) != 0)
            return bad(why, whylen, "must be 10-3600000", a);
    } else if (strncmp(a, "--timeout-ms=", 13) == 0) {
        if (parse_ms(a + 13, 10, 60000, &o->timeout_ms) != 0)
            return bad(why, whylen, "must be 10-60000", a);
    } else if (strncmp(a, "--max-backoff-ms=", 17) == 0) {
        if (parse_ms(a + 17, 10, 3600000, &o->max_backoff_ms) != 0)
            return bad(why, whylen, "must be 10-3600000", a);
    } else if (strncmp(a, "--max-price=", 12) == 0) {
        if (nom_price_parse_micro(a + 12, strlen(a + 12), INT64_MAX / 2,
                                  &o->max_price_micro) != 0)
            return bad(why, whylen, "must be a non-negative decimal number of dollars", a);
    } else if (!is_net_option(a)) {
        return bad(why, whylen, "unknown option", a);
    }
    return OPTIONS_OK;
}

int priced_options_parse(int argc, char *const *argv, struct priced_options *o, char *why,
                         size_t whylen)
{
    memset(o, 0, sizeof *o);
    o->period_ms = PRICED_DEFAULT_PERIOD_MS;
    o->timeout_ms = PRICED_DEFAULT_TIMEOUT_MS;
    o->max_backoff_ms = PRICED_DEFAULT_MAX_BACKOFF_MS;
    o->max_price_micro = PRICED_DEFAULT_MAX_PRICE_MICRO;
    int explicit_backoff = 0;
    for (int i = 1; i < argc; i++) {
        int r = parse_one(argv[i], o, why, whylen);
        if (r != OPTIONS_OK)
            return r;
        explicit_backoff |= strncmp(argv[i], "--max-backoff-ms=", 17) == 0;
    }
    if (!o->provider)
        return bad(why, whylen, "is required", "--provider=URL");
    if (o->max_backoff_ms < o->period_ms) {
        if (explicit_backoff)
            return bad(why, whylen, "must not be shorter than --period-ms", "--max-backoff-ms");
        o->max_backoff_ms = o->period_ms; /* a long period given alone: no backoff beyond it */
    }
    return OPTIONS_OK;
}
