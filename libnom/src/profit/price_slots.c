/* price_slots.c: the bandwidth price out of the board's price slots (nom/price.h). Pure code,
 * apart from price.c so that the host unit tests link it alone. */
#include <errno.h>

#include <nom/price.h>

int nom_price_from_slots(const struct nom_bb_price *slots, unsigned n, struct nom_price *out)
{
    for (unsigned i = 0; i < n; i++) {
        const struct nom_bb_price *p = &slots[i];
        if (p->resource != NOM_RES_BANDWIDTH || p->unit != NOM_UNIT_GBIT)
            continue;
        out->micro_per_gbit = p->price_micro;
        out->usd_per_gbit = (double)p->price_micro / 1e6; /* abi.h: micro-dollars per unit */
        out->timestamp_ns = p->timestamp_ns;
        out->sequence = p->sequence;
        out->stale = (p->flags & NOM_PRICE_STALE) != 0;
        out->stale_since_tsc = out->stale ? p->stale_since_tsc : 0;
        return 0;
    }
    return -ENOENT;
}
