/*
 * json.h: a tiny JSON writer into a caller's buffer (for GET /nom/stats).
 *
 * Contract: calls append to the buffer and insert commas themselves; `key` is the member name
 * inside an object and NULL at the top level or inside an array. Keys and strings are written
 * as given, escaping '"', '\\' and control characters. When the buffer runs out, later calls
 * do nothing and json_finish reports the overflow: output is never truncated silently.
 */
#ifndef NHTTPD_JSON_H
#define NHTTPD_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JSON_MAX_DEPTH 8

struct json {
    char *buf;
    size_t cap, len;
    bool overflow;
    int depth;
    bool first[JSON_MAX_DEPTH]; /* no member written yet at this depth */
};

void json_init(struct json *j, char *buf, size_t cap);
void json_object_begin(struct json *j, const char *key);
void json_object_end(struct json *j);
void json_uint(struct json *j, const char *key, uint64_t v);
void json_int(struct json *j, const char *key, int64_t v);
/* Non-finite values are written as null (JSON has no NaN or infinity). */
void json_double(struct json *j, const char *key, double v);
void json_bool(struct json *j, const char *key, bool v);
void json_null(struct json *j, const char *key);
void json_string(struct json *j, const char *key, const char *s);
/* The length written, or -1 if the buffer was too small or objects are left open. */
long json_finish(struct json *j);

#endif /* NHTTPD_JSON_H */
