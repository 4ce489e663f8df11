/* price_text.c: parses the provider's price.txt line (nom/price.h). Pure code, host-tested. */
#include <stdio.h>
#include <string.h>

#include <nom/price.h>

/* A non-negative decimal "I[.F]" scaled by 10^scale into *out (rounded half up past scale
 * digits), at most max. 0, or -1 if malformed or above max. */
static int parse_fixed(const char *s, size_t len, int scale, int64_t max, int64_t *out)
{
    size_t i = 0;
    int64_t v = 0;
    int frac_digits = -1, round_up = 0;
    if (len == 0 || s[0] == '.')
        return -1;
    for (; i < len; i++) {
        char c = s[i];
        if (c == '.' && frac_digits < 0 && scale > 0) {
            frac_digits = 0;
            continue;
        }
        if (c < '0' || c > '9')
            return -1;
        if (frac_digits >= scale) {
            round_up |= frac_digits == scale && c >= '5';
            frac_digits++;
            continue;
        }
        if (v > (max - (c - '0')) / 10)
            return -1;
        v = v * 10 + (c - '0');
        if (frac_digits >= 0)
            frac_digits++;
    }
    if (frac_digits == 0)
        return -1; /* "1." */
    for (int d = frac_digits < 0 ? 0 : frac_digits; d < scale; d++) {
        if (v > max / 10)
            return -1;
        v *= 10;
    }
    if (round_up && v++ == max)
        return -1;
    *out = v;
    return v > max ? -1 : 0;
}

int nom_price_parse_micro(const char *s, size_t len, int64_t max, int64_t *out)
{
    return parse_fixed(s, len, 6, max, out);
}

const char *nom_price_format(int64_t micro, char *buf, size_t len)
{
    snprintf(buf, len, "%s%lld.%06lld", micro < 0 ? "-" : "",
             (long long)((micro < 0 ? -micro : micro) / 1000000),
             (long long)((micro < 0 ? -micro : micro) % 1000000));
    return buf;
}

enum { F_RESOURCE, F_UNIT, F_PRICE, F_TIMESTAMP, F_SEQUENCE, F_COUNT };
static const char *const field_names[F_COUNT] = {"resource", "unit", "price", "timestamp",
                                                 "sequence"};

struct word {
    const char *v;
    size_t n;
};

static int fail(char *why, size_t whylen, const char *fmt, const char *a, size_t n)
{
    snprintf(why, whylen, fmt, (int)(n > 40 ? 40 : n), a);
    return -1;
}

/* Splits the line into the known fields (words[f].v NULL if absent). */
static int split_fields(const char *t, size_t len, struct word *words, char *why, size_t whylen)
{
    size_t i = 0;
    memset(words, 0, sizeof(struct word) * F_COUNT);
    while (i < len) {
        if (t[i] == ' ') {
            i++;
            continue;
        }
        size_t start = i, eq = 0;
        while (i < len && t[i] != ' ') {
            if ((unsigned char)t[i] < ' ' || (unsigned char)t[i] > '~')
                return fail(why, whylen, "a control or non-ASCII byte in '%.*s'", t + start,
                            i - start + 1);
            if (t[i] == '=' && eq == 0)
                eq = i;
            i++;
        }
        if (eq == 0 || eq == start)
            return fail(why, whylen, "'%.*s' is not key=value", t + start, i - start);
        for (int f = 0; f < F_COUNT; f++) {
            size_t n = eq - start;
            if (strlen(field_names[f]) != n || memcmp(t + start, field_names[f], n) != 0)
                continue;
            if (words[f].v)
                return fail(why, whylen, "'%.*s' given twice", t + start, eq - start);
            words[f] = (struct word){t + eq + 1, i - eq - 1};
        }
    }
    for (int f = 0; f < F_COUNT; f++)
        if (!words[f].v && f != F_TIMESTAMP)
            return fail(why, whylen, "no %.*s= field", field_names[f], strlen(field_names[f]));
    return 0;
}

static int word_is(const struct word *w, const char *s)
{
    return w->n == strlen(s) && memcmp(w->v, s, w->n) == 0;
}

static int parse_price(const struct word *w, int64_t max, int64_t *out, char *why, size_t whylen)
{
    char limit[32];
    if (w->n > 0 && w->v[0] == '-')
        return fail(why, whylen, "negative price %.*s", w->v, w->n);
    if (parse_fixed(w->v, w->n, 6, INT64_MAX / 2, out) != 0)
        return fail(why, whylen, "price '%.*s' is not a decimal number", w->v, w->n);
    if (*out > max) {
        snprintf(why, whylen, "price %.*s $/Gbit is above the sanity limit %s",
                 (int)(w->n > 30 ? 30 : w->n), w->v, nom_price_format(max, limit, sizeof limit));
        return -1;
    }
    return 0;
}

int nom_price_text_parse(const char *text, size_t len, int64_t max_price_micro,
                         struct nom_price_quote *q, char *why, size_t whylen)
{
    struct word w[F_COUNT];
    int64_t v;
    if (len > 0 && text[len - 1] == '\n')
        len--;
    if (len == 0) {
        snprintf(why, whylen, "an empty answer");
        return -1;
    }
    if (split_fields(text, len, w, why, whylen) != 0)
        return -1;
    if (!word_is(&w[F_RESOURCE], "bandwidth"))
        return fail(why, whylen, "resource '%.*s' is not bandwidth", w[F_RESOURCE].v,
                    w[F_RESOURCE].n);
    if (!word_is(&w[F_UNIT], "$/Gbit"))
        return fail(why, whylen, "unit '%.*s' is not $/Gbit", w[F_UNIT].v, w[F_UNIT].n);
    if (parse_price(&w[F_PRICE], max_price_micro, &q->price_micro, why, whylen) != 0)
        return -1;
    if (parse_fixed(w[F_SEQUENCE].v, w[F_SEQUENCE].n, 0, INT64_MAX, &v) != 0)
        return fail(why, whylen, "sequence '%.*s' is not a whole number", w[F_SEQUENCE].v,
                    w[F_SEQUENCE].n);
    q->sequence = (uint64_t)v;
    q->timestamp_ns = 0;
    if (w[F_TIMESTAMP].v) {
        if (parse_fixed(w[F_TIMESTAMP].v, w[F_TIMESTAMP].n, 9, INT64_MAX, &v) != 0)
            return fail(why, whylen, "timestamp '%.*s' is not Unix seconds", w[F_TIMESTAMP].v,
                        w[F_TIMESTAMP].n);
        q->timestamp_ns = (uint64_t)v;
    }
    return 0;
}
