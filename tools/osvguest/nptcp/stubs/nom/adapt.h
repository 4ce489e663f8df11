/* nom/adapt.h for NPtcp on OSv (tools/osvguest/nptcp/README.md): OSv has no batching delay
 * and no profit controller. The "stack" says W is fixed (at 0), so nom_main.c starts no
 * controller, as it does for nom's fixed-W runs. */
#ifndef NOM_ADAPT_H
#define NOM_ADAPT_H

#include <stddef.h>

struct nom_adapt_stack {
    long (*fixed_batching_delay_us)(void);
};

static inline long osv_no_batching_delay_us(void)
{
    return 0;
}

static inline const struct nom_adapt_stack *nom_adapt_stack(void)
{
    static const struct nom_adapt_stack osv = {.fixed_batching_delay_us = osv_no_batching_delay_us};
    return &osv;
}

/* nom's apps/netpipe build generates nom_adapt_profile from its profile.json (libnom/app.mk);
 * here there is no controller to read it, so an empty table stands in for nom_main.c's
 * reference. */
struct nom_adapt_profile {
    int none;
};
static const struct nom_adapt_profile nom_adapt_profile __attribute__((unused));

static inline int nom_adapt_start(int *argc, char **argv, const struct nom_adapt_profile *prof)
{
    (void)argc;
    (void)argv;
    (void)prof;
    return 0;
}

#endif /* NOM_ADAPT_H */
