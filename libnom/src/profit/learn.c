/* learn.c: the online learner (nom/learn.h): discounted UCB over the settings with a token
 * bucket for exploration, estimates per load class, seeding from an offline profile, and the
 * load detector's concurrency from a window's signals. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nom/learn.h>

enum { F_T, F_OPS, F_L, F_J, F_EXITS, NFIELDS };

/* Below this weight a setting counts as never measured (a sample discounted ~135 windows). */
#define WEIGHT_NONE 1e-3

int nom_learn_config_default(struct nom_learn_config *cfg, const struct nom_learn_arm_key *arms,
                             unsigned narms)
{
    if (narms == 0 || narms > NOM_LEARN_MAX_ARMS)
        return -EINVAL;
    *cfg = (struct nom_learn_config){
        .narms = narms, .discount = 0.95, .explore_share = 0.05,
        .explore_burst = narms, .ucb_c = 0.5, .retarget_keep = 0.5, .prior_weight = 0.5,
        .prior_rel_sd = 0.25, .min_rel_sd = 0.02,
    };
    memcpy(cfg->arms, arms, narms * sizeof *arms);
    return 0;
}

static int config_ok(const struct nom_learn_config *c)
{
    if (c->narms == 0 || c->narms > NOM_LEARN_MAX_ARMS)
        return 0;
    for (unsigned i = 0; i < c->narms; i++) {
        for (unsigned j = 0; j < i; j++) {
            if (c->arms[i].w_us == c->arms[j].w_us && c->arms[i].knob == c->arms[j].knob)
                return 0;
        }
    }
    return c->discount > 0 && c->discount <= 1 && c->explore_share >= 0 &&
           c->explore_share < 1 && c->explore_burst >= 0 && c->ucb_c >= 0 &&
           c->retarget_keep >= 0 && c->retarget_keep <= 1 && c->prior_weight > 0 &&
           c->prior_rel_sd >= 0 && c->prior_rel_sd < 1 && c->min_rel_sd >= 0;
}

int nom_learn_init(struct nom_learn *l, const struct nom_learn_config *cfg,
                   nom_learn_score_fn score, void *ctx, enum nom_load_class cls)
{
    if (cfg == NULL || !config_ok(cfg) || score == NULL || (unsigned)cls >= NOM_LOAD_CLASSES)
        return -EINVAL;
    memset(l, 0, sizeof *l);
    l->cfg = *cfg;
    l->score = score;
    l->ctx = ctx;
    l->cls = cls;
    l->current = -1;
    l->greedy = -1;
    l->tokens = cfg->explore_burst;
    return 0;
}

static void arm_add(struct nom_learn_arm *a, const struct nom_learn_sample *s, double weight)
{
    const double v[NFIELDS] = {s->t_gbps, s->ops_per_s, s->latency_us, s->jitter_us,
                               s->exits_per_req};
    for (int f = 0; f < NFIELDS; f++)
        a->sum[f] += weight * v[f];
    a->sum_sq_t += weight * s->t_gbps * s->t_gbps;
    a->sum_sq_l += weight * s->latency_us * s->latency_us;
    a->weight += weight;
}

static void arm_scale(struct nom_learn_arm *a, double k)
{
    for (int f = 0; f < NFIELDS; f++)
        a->sum[f] *= k;
    a->sum_sq_t *= k;
    a->sum_sq_l *= k;
    a->weight *= k;
}

static void arm_mean(const struct nom_learn_arm *a, struct nom_learn_sample *m)
{
    double w = a->weight;
    *m = (struct nom_learn_sample){a->sum[F_T] / w, a->sum[F_OPS] / w, a->sum[F_L] / w,
                                   a->sum[F_J] / w, a->sum[F_EXITS] / w};
}

/* Standard deviation of field F_T or F_L from the weighted sums (0 without weight). */
static double arm_sd_raw(const struct nom_learn_arm *a, int field)
{
    if (a->weight <= 0)
        return 0;
    double mean = a->sum[field] / a->weight;
    double var = (field == F_T ? a->sum_sq_t : a->sum_sq_l) / a->weight - mean * mean;
    return var > 0 ? sqrt(var) : 0;
}

/* The floor of a deviation, relative to the mean: min_rel_sd, or the relative deviation of
 * the most measured setting of the class when larger. Why: the noise is mostly the
 * machine's, shared by every setting; a setting measured once or twice alike must not look
 * more certain than the one measured most. */
static double floor_rel(const struct nom_learn *l, int field)
{
    const struct nom_learn_arm *most = &l->arms[l->cls][0];
    for (unsigned i = 1; i < l->cfg.narms; i++) {
        if (l->arms[l->cls][i].weight > most->weight)
            most = &l->arms[l->cls][i];
    }
    double mean = most->weight > 0 ? most->sum[field] / most->weight : 0;
    double pooled = mean > 0 ? arm_sd_raw(most, field) / mean : 0;
    return fmax(l->cfg.min_rel_sd, pooled);
}

static double arm_sd(const struct nom_learn *l, const struct nom_learn_arm *a, int field)
{
    return fmax(arm_sd_raw(a, field), floor_rel(l, field) * fabs(a->sum[field] / a->weight));
}

static int sample_ok(const struct nom_learn_sample *s)
{
    const double v[NFIELDS] = {s->t_gbps, s->ops_per_s, s->latency_us, s->jitter_us,
                               s->exits_per_req};
    for (int f = 0; f < NFIELDS; f++) {
        if (!isfinite(v[f]) || v[f] < 0)
            return 0;
    }
    return s->latency_us > 0;
}

int nom_learn_seed_profile(struct nom_learn *l, const struct nom_adapt_profile *prof,
                           const char *app, char *why, size_t cap)
{
    if (prof == NULL || prof->npoints == 0) {
        snprintf(why, cap, "learn: no offline profile: learning online from scratch");
        return -EINVAL;
    }
    char reason[160];
    if (nom_adapt_profile_check(prof, reason, sizeof reason) != 0) {
        snprintf(why, cap, "learn: %s: learning online from scratch", reason);
        return -EINVAL;
    }
    if (app == NULL || prof->app == NULL || strcmp(prof->app, app) != 0) {
        snprintf(why, cap, "learn: the profile is %s's, not %s's: learning online from scratch",
                 prof->app ? prof->app : "an unnamed app", app ? app : "?");
        return -EINVAL;
    }
    int seeded = 0;
    for (unsigned i = 0; i < l->cfg.narms; i++) {
        int p = l->cfg.arms[i].knob == 0
                    ? nom_adapt_find_w(prof, NOM_LOAD_MANY, l->cfg.arms[i].w_us) : -ENOENT;
        for (int c = 0; c < NOM_LOAD_CLASSES && p >= 0; c++) {
            const struct nom_adapt_point *pt = &prof->points[c][p];
            /* Two pseudo-samples at T and L +- prior_rel_sd: the mean is the profile's, the
             * deviation says how little a profile from another run is trusted, so the
             * confidence boxes start wide and the hysteresis does not lock on a stale optimum.
             * The profile has no exits: 0 until measured. */
            for (int sign = -1; sign <= 1; sign += 2) {
                double k = 1 + sign * l->cfg.prior_rel_sd;
                struct nom_learn_sample s = {pt->t_gbps * k, pt->ops_per_s, pt->latency_us * k,
                                             pt->jitter_us, 0};
                arm_add(&l->arms[c][i], &s, l->cfg.prior_weight / 2);
            }
            seeded = 1;
        }
    }
    if (!seeded) {
        snprintf(why, cap, "learn: the profile has none of the learner's W values: learning "
                           "online from scratch");
        return -EINVAL;
    }
    return 0;
}

/* Score of one estimate; -INFINITY when the score function refuses it. */
static double score_of(const struct nom_learn *l, const struct nom_learn_sample *m)
{
    double u;
    return l->score(m, l->ctx, &u) == 0 && isfinite(u) ? u : -INFINITY;
}

static int known(const struct nom_learn *l, int i)
{
    return l->arms[l->cls][i].weight > WEIGHT_NONE;
}

/* The estimate's utility and its standard error in utility units (from T's and L's errors,
 * one at a time: a first-order propagation through the caller's nonlinear score). */
static double arm_utility(const struct nom_learn *l, int i, double *se)
{
    const struct nom_learn_arm *a = &l->arms[l->cls][i];
    struct nom_learn_sample m, d;
    arm_mean(a, &m);
    double u = score_of(l, &m), n = sqrt(a->weight);
    d = m;
    d.t_gbps = m.t_gbps + arm_sd(l, a, F_T) / n;
    double du_t = score_of(l, &d) - u;
    d = m;
    d.latency_us = m.latency_us + arm_sd(l, a, F_L) / n;
    double du_l = score_of(l, &d) - u;
    *se = isfinite(du_t) && isfinite(du_l) ? sqrt(du_t * du_t + du_l * du_l) : 0;
    return u;
}

/* How far the utility must fall from one measured W to a larger one, in standard errors of
 * the difference, before the larger is taken for past the peak: two, so that noise alone
 * prunes a setting worth a window about once in forty comparisons. */
#define PEAK_Z 2.0

/* Is setting i past the peak? Profit is unimodal in W for a given knob: it
 * rises while batching saves more than it delays and falls after (the paper's profiles and
 * ours: results/2026-11-26-b77589b's fixed-W cells). So if a measured W_j below W_i earns
 * clearly less than a measured W_k below W_j, the peak lies below W_j and W_i earns less
 * still: measuring it only costs a window far off the optimum. NetPIPE's online runs swept
 * all six W at the start and again after the stream -> ping-pong change, W >= 20 at a third
 * of W = 0's rate, ~12 s of each 60 s phase (results/2026-11-26-online-11e69b8). Any earlier
 * W_k, not only the next one down: on a fine grid each step falls by less than the noise (5
 * and 10 us each cost NetPIPE's ping-pong ~5%), only the fall from the peak shows. */
static int past_the_peak(const struct nom_learn *l, int i, const double *u, const double *se)
{
    const struct nom_learn_arm_key *key = l->cfg.arms;
    int n = (int)l->cfg.narms;
    for (int j = 0; j < n; j++) {
        if (!isfinite(u[j]) || key[j].knob != key[i].knob || key[j].w_us >= key[i].w_us)
            continue;
        for (int k = 0; k < n; k++) {
            if (isfinite(u[k]) && key[k].knob == key[i].knob && key[k].w_us < key[j].w_us &&
                u[k] - u[j] > PEAK_Z * sqrt(se[j] * se[j] + se[k] * se[k]))
                return 1;
        }
    }
    return 0;
}

/* Are settings i and g neighbours on the grid: the same knob and no other setting's W
 * between theirs, or the same W and no other knob value between? */
static int next_to(const struct nom_learn *l, int i, int g)
{
    const struct nom_learn_arm_key *key = l->cfg.arms, ki = key[i], kg = key[g];
    int same_knob = ki.knob == kg.knob;
    if (!same_knob && ki.w_us != kg.w_us)
        return 0;
    uint32_t a = same_knob ? ki.w_us : ki.knob, b = same_knob ? kg.w_us : kg.knob;
    uint32_t lo = a < b ? a : b, hi = a < b ? b : a;
    for (int j = 0; j < (int)l->cfg.narms; j++) {
        int in_line = same_knob ? key[j].knob == ki.knob : key[j].w_us == ki.w_us;
        uint32_t v = same_knob ? key[j].w_us : key[j].knob;
        if (in_line && v > lo && v < hi)
            return 0;
    }
    return 1;
}

/* The optimistic index: the best score over the corners of the setting's confidence box;
 * +INFINITY for a setting never measured (measure it first). -INFINITY for one ruled out as
 * past the peak (pick_optimistic) that is not a neighbour of the greedy setting g, when there
 * is one: a peak that moves shows first next to the old one on a unimodal surface, so the
 * forgetting's re-exploration climbs from there. */
static double arm_index(const struct nom_learn *l, int i, int g, double total_weight)
{
    if (l->arms[l->cls][i].ruled_out && g >= 0 && i != g && !next_to(l, i, g))
        return -INFINITY;
    if (!known(l, i))
        return INFINITY;
    const struct nom_learn_arm *a = &l->arms[l->cls][i];
    struct nom_learn_sample m;
    arm_mean(a, &m);
    double k = sqrt(l->cfg.ucb_c * log(fmax(total_weight, M_E)) / a->weight);
    double ht = k * arm_sd(l, a, F_T);
    double hl = k * arm_sd(l, a, F_L);
    double best = -INFINITY;
    for (int corner = 0; corner < 4; corner++) {
        struct nom_learn_sample c = m;
        c.t_gbps = fmax(0, m.t_gbps + (corner & 1 ? ht : -ht));
        c.latency_us = fmax(1e-3, m.latency_us + (corner & 2 ? hl : -hl));
        best = fmax(best, score_of(l, &c));
    }
    return best;
}

/* The greedy setting: the best estimated utility, but the one in use is kept unless another
 * beats it by more than the standard error of the difference (noise must not move W). */
static int pick_greedy(const struct nom_learn *l)
{
    int best = -1;
    double best_u = -INFINITY, best_se = 0;
    for (int i = 0; i < (int)l->cfg.narms; i++) {
        double se, u;
        if (!known(l, i) || !isfinite(u = arm_utility(l, i, &se)))
            continue;
        if (best < 0 || u > best_u) { /* strict: the first (lowest listed) wins a tie */
            best = i;
            best_u = u;
            best_se = se;
        }
    }
    int keep = l->greedy;
    if (best < 0 || keep < 0 || keep == best || !known(l, keep))
        return best;
    double keep_se, keep_u = arm_utility(l, keep, &keep_se);
    if (isfinite(keep_u) && best_u - keep_u <= sqrt(best_se * best_se + keep_se * keep_se))
        return keep;
    return best;
}

/* The setting with the highest optimistic index, or -1; g: the greedy setting, or -1. A
 * setting past the peak is left out, and stays ruled out until it is measured or the table
 * is cleared, unless it is next to g (arm_index): the evidence that ruled it out fades as the
 * samples below it age, and without the mark the forgetting swept on past the peak again,
 * W = 10 and then 20-40 (memcached's "single" phase, 4-5 s at about 40% of W = 0's rate
 * every 20 s: results/2026-11-26-online-7330658). */
static int pick_optimistic(struct nom_learn *l, int g)
{
    double total = 0, u[NOM_LEARN_MAX_ARMS], se[NOM_LEARN_MAX_ARMS];
    for (unsigned i = 0; i < l->cfg.narms; i++) {
        total += l->arms[l->cls][i].weight;
        u[i] = known(l, (int)i) ? arm_utility(l, (int)i, &se[i]) : NAN; /* once per window */
    }
    int best = -1;
    double best_ix = -INFINITY;
    for (int i = 0; i < (int)l->cfg.narms; i++) {
        if (past_the_peak(l, i, u, se)) {
            l->arms[l->cls][i].ruled_out = 1;
            continue;
        }
        double ix = arm_index(l, i, g, total);
        if (ix > best_ix) {
            best = i;
            best_ix = ix;
        }
    }
    return best;
}

int nom_learn_next(struct nom_learn *l)
{
    int greedy = pick_greedy(l);
    int explore = pick_optimistic(l, greedy);
    int next = greedy >= 0 ? greedy : 0;
    if (explore >= 0 && explore != next && l->tokens >= 1) {
        l->tokens -= 1;
        l->explorations++;
        next = explore;
    }
    l->tokens = fmin(l->cfg.explore_burst, l->tokens + l->cfg.explore_share);
    l->greedy = greedy;
    if (l->current >= 0 && next != l->current)
        l->switches++;
    l->current = next;
    l->windows++;
    return next;
}

/* How far x lies from the arm's mean of field, in (floored) standard deviations. */
static double z_of(const struct nom_learn *l, const struct nom_learn_arm *a, double x, int field)
{
    double sd = arm_sd(l, a, field);
    return sd > 0 ? (x - a->sum[field] / a->weight) / sd : 0;
}

/* Change detection on a setting with history (a CUSUM-like rule, after Liu, Lee and Shroff,
 * "A change-detection based framework for piecewise-stationary multi-armed bandits", 2018):
 * one sample beyond CHANGE_Z_ONE deviations, or CHANGE_RUN in a row beyond CHANGE_Z_RUN on
 * the same side, means the outcome of this setting changed: the load or the machine did, so
 * the whole class's history is dropped (as that paper restarts its bandit) and the bucket is
 * refilled for one sweep. Without it a long history hides the change for ~1/(1 - discount)
 * windows and inflates the variance that the hysteresis relies on. Why every setting, not
 * only the one that showed it: the others' means are biased, not merely uncertain; kept at a
 * reduced weight and mixed with new samples they had wide boxes that drew one exploration
 * after another (NetPIPE, stream then ping-pong in one class: results/2026-11-26-b77589b,
 * adaptive-online-bonus run 1 ran W > 0 in 16 of the ping-pong phase's 60 s). */
#define CHANGE_MIN_WEIGHT 5.0
#define CHANGE_Z_ONE 5.0
#define CHANGE_Z_RUN 2.5
#define CHANGE_RUN 3

/* One field's step of the rule: 1 on a change; *run counts the samples in a row beyond
 * CHANGE_Z_RUN, positive above the mean, negative below. */
static int field_changed(double z, int *run)
{
    if (fabs(z) > CHANGE_Z_ONE)
        return 1;
    if (fabs(z) <= CHANGE_Z_RUN)
        *run = 0;
    else if (z > 0)
        *run = *run > 0 ? *run + 1 : 1;
    else
        *run = *run < 0 ? *run - 1 : -1;
    return abs(*run) >= CHANGE_RUN;
}

static int changed(const struct nom_learn *l, struct nom_learn_arm *a,
                   const struct nom_learn_sample *s)
{
    if (a->weight < CHANGE_MIN_WEIGHT) {
        a->run_t = a->run_l = 0;
        return 0;
    }
    int t = field_changed(z_of(l, a, s->t_gbps, F_T), &a->run_t);
    int lat = field_changed(z_of(l, a, s->latency_us, F_L), &a->run_l);
    return t || lat;
}

int nom_learn_observe(struct nom_learn *l, int arm, const struct nom_learn_sample *s)
{
    if (arm < 0 || (unsigned)arm >= l->cfg.narms || s == NULL || !sample_ok(s))
        return -EINVAL;
    struct nom_learn_arm *a = &l->arms[l->cls][arm];
    if (changed(l, a, s)) {
        memset(l->arms[l->cls], 0, sizeof l->arms[l->cls]);
        l->tokens = l->cfg.explore_burst;
        l->greedy = -1;
        l->changes++;
    }
    for (unsigned i = 0; i < l->cfg.narms; i++)
        arm_scale(&l->arms[l->cls][i], l->cfg.discount);
    arm_add(a, s, 1.0);
    a->ruled_out = 0; /* measured: its own samples speak for it now */
    return 0;
}

void nom_learn_set_class(struct nom_learn *l, enum nom_load_class cls)
{
    if (cls == l->cls || (unsigned)cls >= NOM_LOAD_CLASSES)
        return;
    l->cls = cls;
    for (unsigned i = 0; i < l->cfg.narms; i++)
        arm_scale(&l->arms[cls][i], l->cfg.retarget_keep);
    l->greedy = -1; /* the old class's greedy setting means nothing here */
    l->tokens = l->cfg.explore_burst;
}

void nom_learn_retarget(struct nom_learn *l)
{
    /* The new utility decides afresh, without the old one's hysteresis. No exploration burst:
     * what each setting gives (T, L, J, exits) does not depend on the price, so the estimates
     * hold and are only scored anew; a burst here cost memcached and NetPIPE windows far off
     * the optimum right after each price change. */
    l->greedy = -1;
}

int nom_learn_estimate(const struct nom_learn *l, int arm, struct nom_learn_estimate *out)
{
    if (arm < 0 || (unsigned)arm >= l->cfg.narms)
        return -EINVAL;
    const struct nom_learn_arm *a = &l->arms[l->cls][arm];
    *out = (struct nom_learn_estimate){.key = l->cfg.arms[arm], .weight = a->weight};
    if (a->weight > 0) {
        arm_mean(a, &out->mean);
        out->sd_t_gbps = arm_sd_raw(a, F_T);
        out->sd_latency_us = arm_sd_raw(a, F_L);
    }
    return 0;
}

int nom_learn_best(const struct nom_learn *l, double *u)
{
    int best = -1;
    double best_u = -INFINITY, se;
    for (int i = 0; i < (int)l->cfg.narms; i++) {
        double v;
        if (known(l, i) && isfinite(v = arm_utility(l, i, &se)) && v > best_u) {
            best = i;
            best_u = v;
        }
    }
    if (best < 0)
        return -ENOENT;
    *u = best_u;
    return best;
}

/* x rounded to the nearest unsigned, 0 for NaN or negative, capped at a million. */
static unsigned count_of(double x)
{
    if (!isfinite(x) || x < 0)
        return x > 0 ? 1000000u : 0; /* +inf: the cap */
    return x > 1e6 ? 1000000u : (unsigned)lround(x);
}

unsigned nom_load_concurrency(const struct nom_load_signals *s)
{
    unsigned little = count_of(s->requests_per_s * s->latency_us * 1e-6); /* Little's law */
    unsigned seen = s->snapshots > 0 ? count_of(s->in_flight) : s->active_conns;
    return little > seen ? little : seen;
}
