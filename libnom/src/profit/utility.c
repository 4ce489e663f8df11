/* utility.c: the utility functions of paper section 4 (eq. 2-4), a line-by-line port of
 * tools/profit/utility.py (its docstring fixes the units; the host tests compare the two). */
#include <errno.h>
#include <math.h>
#include <string.h>

#include <nom/adapt.h>

static const char *const utility_names[] = {"penalty", "refund", "bonus"};
static const char *const load_names[] = {"many", "single"};

struct nom_utility_params nom_utility_defaults(void)
{
    /* Paper 6.4; beta per ms and gamma over s of mean latency (tools/profit says why). */
    return (struct nom_utility_params){.alpha = 20.0, .beta = 10.0, .gamma = 0.01,
                                       .delta = INFINITY, .x = 100.0, .l0_us = 750.0,
                                       .refund_unit_us = 1000.0, .bonus_unit_us = 1e6};
}

/* N(L0, L, sigma) of eq. 2: the probability that a normal sample of mean L and standard
 * deviation sigma exceeds L0; sigma = 0 is a constant latency. */
static double slo_violation_probability(double l0_us, double mean_us, double sigma_us)
{
    if (sigma_us == 0)
        return mean_us > l0_us ? 1.0 : 0.0;
    return 0.5 * erfc((l0_us - mean_us) / (sigma_us * sqrt(2.0)));
}

static double utility_penalty(const struct nom_utility_params *p, double t, double l,
                              double sigma, double price)
{
    double n = slo_violation_probability(p->l0_us, l, sigma);
    return t * (p->alpha * (1.0 - fmin(1.0, p->x * n)) - price);
}

static double utility_refund(const struct nom_utility_params *p, double t, double l,
                             double price)
{
    return t * (fmax(0.0, p->alpha - p->beta * l / p->refund_unit_us) - price);
}

static double utility_bonus(const struct nom_utility_params *p, double t, double l, double price)
{
    return t * (p->alpha + fmin(p->gamma * p->bonus_unit_us / l, p->delta) - price);
}

int nom_utility(enum nom_utility_kind kind, const struct nom_utility_params *p, double t_gbps,
                double latency_us, double jitter_us, double price, double *out)
{
    if (!(t_gbps >= 0) || !(latency_us >= 0)) /* also rejects NaN, as the Python does */
        return -EINVAL;
    switch (kind) {
    case NOM_UTILITY_PENALTY:
        if (!(jitter_us >= 0))
            return -EINVAL;
        *out = utility_penalty(p, t_gbps, latency_us, jitter_us, price);
        return 0;
    case NOM_UTILITY_REFUND:
        *out = utility_refund(p, t_gbps, latency_us, price);
        return 0;
    case NOM_UTILITY_BONUS:
        if (latency_us <= 0)
            return -EINVAL;
        *out = utility_bonus(p, t_gbps, latency_us, price);
        return 0;
    }
    return -EINVAL;
}

const char *nom_utility_name(enum nom_utility_kind kind)
{
    return (unsigned)kind < 3 ? utility_names[kind] : "?";
}

const char *nom_load_name(enum nom_load_class cls)
{
    return (unsigned)cls < NOM_LOAD_CLASSES ? load_names[cls] : "?";
}

int nom_utility_parse(const char *name, enum nom_utility_kind *out)
{
    for (unsigned i = 0; i < 3; i++) {
        if (strcmp(name, utility_names[i]) == 0) {
            *out = (enum nom_utility_kind)i;
            return 0;
        }
    }
    return -EINVAL;
}
