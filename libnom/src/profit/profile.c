/* profile.c: an application's offline profile (paper 6.1) and the choice of W over it:
 * the point of the current load class that maximizes the utility at the current price. */
#include <errno.h>
#include <math.h>
#include <stdio.h>

#include <nom/adapt.h>

/* Every figure finite and non-negative, latency positive (the bonus divides by it). */
static int point_check(const struct nom_adapt_point *pt, const char *cls, unsigned i, char *why,
                       size_t cap)
{
    const double v[] = {pt->t_gbps, pt->ops_per_s, pt->latency_us, pt->jitter_us};
    static const char *const names[] = {"t_gbps", "ops_per_s", "latency_us", "jitter_us"};
    for (unsigned k = 0; k < 4; k++) {
        if (!isfinite(v[k]) || v[k] < 0) {
            snprintf(why, cap, "profile: %s[%u].%s is %g, not a finite number >= 0", cls, i,
                     names[k], v[k]);
            return -EINVAL;
        }
    }
    if (pt->latency_us <= 0) {
        snprintf(why, cap, "profile: %s[%u].latency_us must be > 0", cls, i);
        return -EINVAL;
    }
    if (pt->w_us > NOM_ADAPT_MAX_W_US) {
        snprintf(why, cap, "profile: %s[%u].w_us %u is above %u", cls, i, (unsigned)pt->w_us,
                 NOM_ADAPT_MAX_W_US);
        return -EINVAL;
    }
    return 0;
}

static int class_check(const struct nom_adapt_profile *prof, enum nom_load_class c, char *why,
                       size_t cap)
{
    const struct nom_adapt_point *pts = prof->points[c], *many = prof->points[NOM_LOAD_MANY];
    const char *name = nom_load_name(c);
    if (pts == NULL) {
        snprintf(why, cap, "profile: no points for load class %s", name);
        return -EINVAL;
    }
    for (unsigned i = 0; i < prof->npoints; i++) {
        if (point_check(&pts[i], name, i, why, cap) != 0)
            return -EINVAL;
        if (i > 0 && pts[i].w_us <= pts[i - 1].w_us) {
            snprintf(why, cap, "profile: %s W values not strictly increasing (%u after %u)",
                     name, (unsigned)pts[i].w_us, (unsigned)pts[i - 1].w_us);
            return -EINVAL;
        }
        if (pts[i].w_us != many[i].w_us) {
            snprintf(why, cap, "profile: %s[%u] has W %u, many[%u] has %u", name, i,
                     (unsigned)pts[i].w_us, i, (unsigned)many[i].w_us);
            return -EINVAL;
        }
    }
    return 0;
}

int nom_adapt_profile_check(const struct nom_adapt_profile *prof, char *why, size_t cap)
{
    if (prof == NULL) {
        snprintf(why, cap, "profile: none linked");
        return -EINVAL;
    }
    if (prof->npoints == 0 || prof->npoints > NOM_ADAPT_MAX_POINTS) {
        snprintf(why, cap, "profile: %u points per class, need 1 to %u", prof->npoints,
                 NOM_ADAPT_MAX_POINTS);
        return -EINVAL;
    }
    if (prof->points[NOM_LOAD_MANY] == NULL) {
        snprintf(why, cap, "profile: no points for load class many");
        return -EINVAL;
    }
    for (int c = 0; c < NOM_LOAD_CLASSES; c++) {
        if (class_check(prof, (enum nom_load_class)c, why, cap) != 0)
            return -EINVAL;
    }
    return 0;
}

int nom_adapt_best(const struct nom_adapt_profile *prof, enum nom_load_class cls,
                   enum nom_utility_kind kind, const struct nom_utility_params *p, double price,
                   double *rate)
{
    int best = -1;
    double best_u = 0;
    for (unsigned i = 0; i < prof->npoints; i++) {
        const struct nom_adapt_point *pt = &prof->points[cls][i];
        double u;
        if (nom_utility(kind, p, pt->t_gbps, pt->latency_us, pt->jitter_us, price, &u) != 0)
            return -EINVAL;
        if (best < 0 || u > best_u) { /* strict: the lowest W wins a tie */
            best = (int)i;
            best_u = u;
        }
    }
    *rate = best_u;
    return best;
}

int nom_adapt_find_w(const struct nom_adapt_profile *prof, enum nom_load_class cls,
                     uint32_t w_us)
{
    for (unsigned i = 0; i < prof->npoints; i++) {
        if (prof->points[cls][i].w_us == w_us)
            return (int)i;
    }
    return -ENOENT;
}
