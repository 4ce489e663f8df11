/* test_parsers: unit tests of nomload's reply framing and statistics, one named case each;
 * run as `test_parsers NAME` (tests/test_loadgen_c.py runs every case). Exit 0 = pass; the
 * harness is libnom's tests/host/check.h, the one of every host C test. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "loadgen.h"

static long mc(const char *s, int *hit) { return mc_response_length(s, strlen(s), hit); }

/* Is a GET hit framed by its byte count, even when the data holds "END\r\n"? */
static int mc_value_reply(void)
{
    int hit;
    const char *r = "VALUE nomkey:00000001 0 5\r\nEND\r\n\r\nEND\r\nSTORED\r\n";
    CHECK(mc(r, &hit) == (long)strlen("VALUE nomkey:00000001 0 5\r\nEND\r\n\r\nEND\r\n"));
    CHECK(hit == 1);
    return 0;
}

/* Are a miss, STORED, partial replies and errors told apart? */
static int mc_other_replies(void)
{
    int hit;
    CHECK(mc("END\r\n", &hit) == 5 && hit == 0);
    CHECK(mc("STORED\r\nEND\r\n", &hit) == 8);
    CHECK(mc("VALUE k 0 10\r\nabc", &hit) == 0);
    CHECK(mc("STOR", &hit) == 0);
    CHECK(mc("SERVER_ERROR out of memory\r\n", &hit) == -1);
    CHECK(mc("VALUE k 0 3\r\nabcXXEND\r\n", &hit) == -1);
    return 0;
}

/* Is the GET/SET mix 90/10 and is a SET well formed? */
static int mc_request_mix(void)
{
    struct mc_config c = {.keys = 100, .value_size = 8, .get_permille = 900};
    uint64_t rng = 42;
    char buf[256];
    int gets = 0;
    for (int i = 0; i < 10000; i++) {
        CHECK(mc_write_request(&c, &rng, buf, sizeof buf) > 0);
        gets += buf[0] == 'g';
    }
    CHECK(gets > 8800 && gets < 9200);
    int n = mc_write_set(&c, 7, buf, sizeof buf);
    CHECK(n == (int)strlen("set nomkey:00000007 0 0 8\r\nabcdefgh\r\n"));
    CHECK(memcmp(buf, "set nomkey:00000007 0 0 8\r\nabcdefgh\r\n", (size_t)n) == 0);
    return 0;
}

/* Is an HTTP reply framed by Content-Length, with keep-alive and close noticed? */
static int http_framing(void)
{
    int status, close;
    const char *r = "HTTP/1.1 200 OK\r\nServer: x\r\ncontent-length: 3\r\n\r\nabcHTTP/1.1";
    CHECK(http_response_length(r, strlen(r), &status, &close) == (long)strlen(r) - 8);
    CHECK(status == 200 && close == 0);
    const char *c = "HTTP/1.0 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n";
    CHECK(http_response_length(c, strlen(c), &status, &close) == (long)strlen(c));
    CHECK(status == 404 && close == 1);
    const char *part = "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc";
    CHECK(http_response_length(part, strlen(part), &status, &close) == 0);
    const char *chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
    CHECK(http_response_length(chunked, strlen(chunked), &status, &close) == -1);
    return 0;
}

/* Are mean, median, 99th percentile and stddev right on a known set? */
static int stats_summary(void)
{
    struct samples s = {0};
    for (int i = 1; i <= 100; i++)
        CHECK(samples_add(&s, (uint64_t)(101 - i) * 1000) == 0);
    struct summary r = samples_summarize(&s);
    CHECK(r.mean_us > 50.49 && r.mean_us < 50.51);
    CHECK(r.p50_us == 50.0 && r.p99_us == 99.0 && r.min_us == 1.0 && r.max_us == 100.0);
    CHECK(r.stddev_us > 28.86 && r.stddev_us < 28.87);
    samples_free(&s);
    struct samples none = {0};
    CHECK(samples_summarize(&none).mean_us == 0);
    return 0;
}

static const struct { const char *name; int (*fn)(void); } cases[] = {
    {"mc_value_reply", mc_value_reply}, {"mc_other_replies", mc_other_replies},
    {"mc_request_mix", mc_request_mix}, {"http_framing", http_framing},
    {"stats_summary", stats_summary},
};

/* One case in a frame of its own: the loop's index must not live across check.h's setjmp. */
static int run_case(size_t i)
{
    CHECK_RUN(cases[i].name, cases[i].fn());
    return failures != 0;
}

int main(int argc, char **argv)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (argc < 2)
            printf("%s\n", cases[i].name);
        else if (strcmp(argv[1], cases[i].name) == 0)
            return run_case(i);
    }
    return argc < 2 ? 0 : 2;
}
