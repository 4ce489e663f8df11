/* json.c: the JSON writer of json.h. */
#include "json.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>

void json_init(struct json *j, char *buf, size_t cap)
{
    *j = (struct json){.buf = buf, .cap = cap};
    j->first[0] = true;
}

static void put(struct json *j, const char *fmt, ...)
{
    va_list ap;
    if (j->overflow)
        return;
    va_start(ap, fmt);
    int n = vsnprintf(j->buf + j->len, j->cap - j->len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= j->cap - j->len)
        j->overflow = true;
    else
        j->len += (size_t)n;
}

static void put_string(struct json *j, const char *s)
{
    put(j, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            put(j, "\\%c", c);
        else if (c < 0x20)
            put(j, "\\u%04x", c);
        else
            put(j, "%c", c);
    }
    put(j, "\"");
}

/* The comma and "key": that precede every value. */
static void member(struct json *j, const char *key)
{
    if (!j->first[j->depth])
        put(j, ",");
    j->first[j->depth] = false;
    if (key != NULL) {
        put_string(j, key);
        put(j, ":");
    }
}

void json_object_begin(struct json *j, const char *key)
{
    member(j, key);
    put(j, "{");
    if (j->depth + 1 >= JSON_MAX_DEPTH) {
        j->overflow = true;
        return;
    }
    j->first[++j->depth] = true;
}

void json_object_end(struct json *j)
{
    put(j, "}");
    if (j->depth > 0)
        j->depth--;
}

void json_uint(struct json *j, const char *key, uint64_t v)
{
    member(j, key);
    put(j, "%llu", (unsigned long long)v);
}

void json_int(struct json *j, const char *key, int64_t v)
{
    member(j, key);
    put(j, "%lld", (long long)v);
}

void json_double(struct json *j, const char *key, double v)
{
    member(j, key);
    if (isfinite(v))
        put(j, "%.3f", v);
    else
        put(j, "null");
}

void json_bool(struct json *j, const char *key, bool v)
{
    member(j, key);
    put(j, v ? "true" : "false");
}

void json_null(struct json *j, const char *key)
{
    member(j, key);
    put(j, "null");
}

void json_string(struct json *j, const char *key, const char *s)
{
    member(j, key);
    put_string(j, s);
}

long json_finish(struct json *j)
{
    return j->overflow || j->depth != 0 ? -1 : (long)j->len;
}
