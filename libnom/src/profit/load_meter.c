/* load_meter.c: the load class with hysteresis (nom/adapt.h says the rule and why). */
#include <nom/adapt.h>

void nom_load_meter_init(struct nom_load_meter *m, enum nom_load_class cls)
{
    m->cls = cls;
    m->votes = 0;
    m->vote = cls;
}

/* What one sample says: a class, or NOM_LOAD_CLASSES inside the dead band. */
static enum nom_load_class vote_of(unsigned concurrency)
{
    if (concurrency >= NOM_ADAPT_MANY_CONNS)
        return NOM_LOAD_MANY;
    if (concurrency <= NOM_ADAPT_SINGLE_CONNS)
        return NOM_LOAD_SINGLE;
    return NOM_LOAD_CLASSES;
}

int nom_load_meter_sample(struct nom_load_meter *m, unsigned concurrency)
{
    enum nom_load_class v = vote_of(concurrency);
    m->vote = v;
    if (v == NOM_LOAD_CLASSES || v == m->cls) {
        m->votes = 0; /* votes must be consecutive */
        return 0;
    }
    if (++m->votes < NOM_ADAPT_VOTES)
        return 0;
    m->cls = v;
    m->votes = 0;
    return 1;
}

int nom_load_meter_settled(const struct nom_load_meter *m)
{
    return m->vote == m->cls;
}
