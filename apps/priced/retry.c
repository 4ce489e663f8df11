/* retry.c: failure episodes and exponential backoff (retry.h). */
#include "retry.h"

void retry_init(struct retry *r, uint32_t period_ms, uint32_t max_backoff_ms)
{
    *r = (struct retry){.period_ms = period_ms, .max_backoff_ms = max_backoff_ms};
}

int retry_failed(struct retry *r, int kind)
{
    int begins = r->kind != kind;
    r->failures++;
    r->kind = kind;
    return begins;
}

unsigned retry_succeeded(struct retry *r)
{
    unsigned ended = r->failures;
    r->failures = 0;
    r->kind = 0;
    return ended;
}

uint32_t retry_delay_ms(const struct retry *r)
{
    uint64_t d = r->period_ms;
    for (unsigned i = 1; i < r->failures && d < r->max_backoff_ms; i++)
        d *= 2;
    return d > r->max_backoff_ms && r->failures > 0 ? r->max_backoff_ms : (uint32_t)d;
}
