/* stats.c: per-request latency samples (ns) and their mean, median, 99th percentile, stddev. */
#include <math.h>
#include <stdlib.h>

#include "loadgen.h"

int samples_add(struct samples *s, uint64_t ns)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 1 << 16;
        uint32_t *p = realloc(s->ns, cap * sizeof *p);
        if (!p)
            return -1;
        s->ns = p;
        s->cap = cap;
    }
    s->ns[s->n++] = ns > UINT32_MAX ? UINT32_MAX : (uint32_t)ns;
    return 0;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Nearest-rank percentile (p in 0..100) of sorted samples. */
static double percentile_us(const struct samples *s, double p)
{
    size_t rank = (size_t)ceil(p / 100.0 * (double)s->n);
    if (rank < 1)
        rank = 1;
    return s->ns[rank - 1] / 1000.0;
}

struct summary samples_summarize(struct samples *s)
{
    struct summary r = {0};
    if (s->n == 0)
        return r;
    qsort(s->ns, s->n, sizeof s->ns[0], cmp_u32);
    double sum = 0, sq = 0;
    for (size_t i = 0; i < s->n; i++)
        sum += s->ns[i];
    double mean = sum / (double)s->n;
    for (size_t i = 0; i < s->n; i++)
        sq += (s->ns[i] - mean) * (s->ns[i] - mean);
    r.mean_us = mean / 1000.0;
    r.stddev_us = sqrt(sq / (double)s->n) / 1000.0;
    r.p50_us = percentile_us(s, 50);
    r.p99_us = percentile_us(s, 99);
    r.min_us = s->ns[0] / 1000.0;
    r.max_us = s->ns[s->n - 1] / 1000.0;
    return r;
}

void samples_free(struct samples *s)
{
    free(s->ns);
    s->ns = NULL;
    s->n = s->cap = 0;
}
