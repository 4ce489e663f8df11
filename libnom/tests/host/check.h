/* check.h: the host unit tests' tiny harness: each named case prints PASS or FAIL (with the
 * first failed condition) and the program exits non-zero if any failed. */
#ifndef CHECK_H
#define CHECK_H
#include <stdio.h>

static int failures;
static const char *failed_cond;

#define EXPECT(cond) do { if (!(cond)) { failed_cond = #cond; return 0; } } while (0)
#define RUN(fn) do { failed_cond = ""; int ok_ = fn(); \
    printf("%s %s%s%s\n", ok_ ? "PASS" : "FAIL", #fn, ok_ ? "" : ": ", failed_cond); \
    failures += !ok_; } while (0)

#endif
