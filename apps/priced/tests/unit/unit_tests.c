/* unit_tests.c: host unit tests of priced's pure parts: the URL and HTTP response parsers,
 * price.txt, the options, the retry episodes and backoff, and the subscribers' slot reader.
 * A table of named cases, each asking one question. `unit_tests --list` names them;
 * `unit_tests NAME` runs one and prints "PASS NAME" or "FAIL NAME: file:line: check" (exit 1;
 * libnom/tests/host/check.h, the harness of every host C test).
 * tests/test_units.py runs each as its own pytest case. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nom/price.h>

#include "check.h"
#include "http_client.h"
#include "options.h"
#include "retry.h"

/* ---- URL ---------------------------------------------------------------------------- */

/* Does a provider URL give the address, port, path and Host header? */
static void url_parts(void)
{
    struct http_url u;
    char why[96];
    CHECK(http_url_parse("http://10.0.2.2:7070/price.txt", &u, why, sizeof why) == 0);
    const unsigned char *ip = (const unsigned char *)&u.ip;
    CHECK(ip[0] == 10 && ip[1] == 0 && ip[2] == 2 && ip[3] == 2);
    CHECK(u.port == 7070 && strcmp(u.path, "/price.txt") == 0);
    CHECK(strcmp(u.host, "10.0.2.2:7070") == 0);
    CHECK(http_url_parse("HTTP://1.2.3.4", &u, why, sizeof why) == 0);
    CHECK(u.port == 80 && strcmp(u.path, "/") == 0);
}

/* Are URLs priced cannot use refused, each with a reason? */
static void url_rejects(void)
{
    static const char *const bad[] = {
        "https://10.0.2.2/price.txt", "http://provider/price.txt", "http://10.0.2.256/",
        "http://10.0.2/", "http://10.0.2.2:0/", "http://10.0.2.2:70000/", "http://10.0.2.2:/",
        "http://10.0.2.2x/", "http://10.0.2.2/a b", "http://10.0.2.2/#frag", "", "10.0.2.2",
        "http://10.0.2.2:7070/price.txt?x=\x01",
    };
    struct http_url u;
    char why[96];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        why[0] = '\0';
        CHECK(http_url_parse(bad[i], &u, why, sizeof why) == -1);
        CHECK(why[0] != '\0');
    }
    char longer[400] = "http://1.2.3.4/";
    memset(longer + strlen(longer), 'a', 300);
    CHECK(http_url_parse(longer, &u, why, sizeof why) == -1);
}

/* ---- HTTP responses ------------------------------------------------------------------- */

static const char PROVIDER_ANSWER[] =
    "HTTP/1.0 200 OK\r\nServer: nom-priceprovider/1 Python/3.11.2\r\n"
    "Date: Sun, 22 Nov 2026 05:00:00 GMT\r\nContent-Type: text/plain\r\n"
    "Content-Length: 85\r\nCache-Control: no-store\r\n\r\n"
    "resource=bandwidth unit=$/Gbit price=1.000000 timestamp=1763787600.500000 sequence=1\n";

static int feed_all(struct http_response *r, const char *text, size_t chunk)
{
    int res = HTTP_MORE;
    size_t n = strlen(text);
    http_response_init(r);
    for (size_t i = 0; i < n && res == HTTP_MORE; i += chunk)
        res = http_response_feed(r, text + i, n - i < chunk ? n - i : chunk);
    return res;
}

/* Is the provider's real answer parsed whole, at once and a byte at a time? */
static void response_content_length(void)
{
    static struct http_response r;
    for (size_t chunk = 1; chunk <= sizeof PROVIDER_ANSWER; chunk = chunk * 3 + 1) {
        CHECK(feed_all(&r, PROVIDER_ANSWER, chunk) == HTTP_DONE);
        CHECK(r.status == 200 && strcmp(r.reason, "OK") == 0 && r.content_length == 85);
        CHECK(r.body_len == 85 && strncmp(r.body, "resource=bandwidth", 18) == 0);
        CHECK(http_response_eof(&r) == HTTP_DONE);
    }
}

/* Does a body without Content-Length end when the server closes, and only then? */
static void response_close_delimited(void)
{
    static struct http_response r;
    CHECK(feed_all(&r, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nprice=1", 5) == HTTP_MORE);
    CHECK(http_response_feed(&r, "0\n", 2) == HTTP_MORE);
    CHECK(http_response_eof(&r) == HTTP_DONE);
    CHECK(r.content_length == -1 && strcmp(r.body, "price=10\n") == 0);
}

/* Is a non-200 answer complete at the end of its head, whatever its body's size? */
static void response_error_status(void)
{
    static struct http_response r;
    CHECK(feed_all(&r, "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 99999\r\n\r\nxx",
                   7) == HTTP_DONE);
    CHECK(r.status == 503 && strcmp(r.reason, "Service Unavailable") == 0);
    CHECK(feed_all(&r, "HTTP/1.1 404\r\n\r\n", 100) == HTTP_DONE && r.status == 404);
}

/* Are repeated but equal Content-Length values, and an empty body, accepted? */
static void response_tolerated(void)
{
    static struct http_response r;
    CHECK(feed_all(&r, "HTTP/1.1 200 OK\r\nContent-Length: 3\r\ncontent-length:3 \r\n\r\nabc",
                   4) == HTTP_DONE);
    CHECK(strcmp(r.body, "abc") == 0);
    CHECK(feed_all(&r, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", 100) == HTTP_DONE);
    CHECK(r.body_len == 0);
}

/* Is every malformed, unsupported or oversized answer an error with a reason? */
static void response_rejects(void)
{
    static char big[HTTP_MAX_HEAD + 200], huge_body[HTTP_MAX_BODY + 200];
    static const char *const bad[] = {
        "HTTP/1.1 200 OK\nContent-Length: 1\n\nx",                       /* bare LF */
        "HTTP/1.1 200 OK\r\nX-A: 1\r\n folded\r\n\r\n",                   /* obs-fold */
        "HTTP/2 200 OK\r\n\r\n",                                           /* version */
        "ICY 200 OK\r\n\r\n",                                              /* not HTTP */
        "HTTP/1.1 20 OK\r\n\r\n", "HTTP/1.1 2000 OK\r\n\r\n", "HTTP/1.1 600 X\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabc",
        "HTTP/1.1 200 OK\r\nContent-Length: -3\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 3, 3\r\n\r\nabc",
        "HTTP/1.1 200 OK\r\nContent-Length: 99999999\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabcdef",            /* extra bytes */
        "HTTP/1.1 200 OK\r\nNo colon here\r\n\r\n",
        "HTTP/1.1 200 OK\r\n: empty name\r\n\r\n",
        "HTTP/1.1 200 OK\r\nX-A: a\x01" "b\r\n\r\n",                     /* control char */
        big, huge_body,
    };
    static struct http_response r;
    memset(big, 'a', sizeof big - 1);
    memcpy(big, "HTTP/1.1 200 OK\r\nX-Long: ", 26);
    snprintf(huge_body, sizeof huge_body, "HTTP/1.1 200 OK\r\n\r\n");
    memset(huge_body + strlen(huge_body), 'p', HTTP_MAX_BODY + 10);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int res = feed_all(&r, bad[i], 1 + i % 7);
        if (res == HTTP_MORE)
            res = http_response_eof(&r);
        CHECK(res == HTTP_ERROR);
        CHECK(r.error != NULL && r.error[0] != '\0');
        CHECK(http_response_feed(&r, "x", 1) == HTTP_ERROR); /* stays failed */
    }
}

/* Is a connection that closes early an error that says where? */
static void response_truncated(void)
{
    static struct http_response r;
    http_response_init(&r);
    CHECK(http_response_eof(&r) == HTTP_ERROR && strstr(r.error, "without an answer"));
    CHECK(feed_all(&r, "HTTP/1.1 200 OK\r\nContent-Le", 4) == HTTP_MORE);
    CHECK(http_response_eof(&r) == HTTP_ERROR && strstr(r.error, "head"));
    CHECK(feed_all(&r, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", 4) == HTTP_MORE);
    CHECK(http_response_eof(&r) == HTTP_ERROR && strstr(r.error, "3 of 10"));
}

/* ---- price.txt ------------------------------------------------------------------------ */

static int parse(const char *text, struct nom_price_quote *q, char *why)
{
    return nom_price_text_parse(text, strlen(text), PRICED_DEFAULT_MAX_PRICE_MICRO, q, why, 160);
}

/* Is the provider's line read exactly, without floating point? */
static void price_provider_line(void)
{
    struct nom_price_quote q;
    char why[160];
    CHECK(parse("resource=bandwidth unit=$/Gbit price=10.000000 timestamp=1763787600.500000 "
                "sequence=2\n", &q, why) == 0);
    CHECK(q.price_micro == 10000000 && q.sequence == 2);
    CHECK(q.timestamp_ns == 1763787600500000000ull);
    CHECK(parse("sequence=7 price=0.25 unit=$/Gbit resource=bandwidth future=yes", &q, why) == 0);
    CHECK(q.price_micro == 250000 && q.timestamp_ns == 0 && q.sequence == 7);
}

/* Are prices rounded half up to the micro-dollar, and zero allowed? */
static void price_rounding(void)
{
    int64_t v;
    CHECK(nom_price_parse_micro("0.1234565", 9, INT64_MAX, &v) == 0 && v == 123457);
    CHECK(nom_price_parse_micro("0.1234564999", 12, INT64_MAX, &v) == 0 && v == 123456);
    CHECK(nom_price_parse_micro("12", 2, INT64_MAX, &v) == 0 && v == 12000000);
    CHECK(nom_price_parse_micro("0", 1, INT64_MAX, &v) == 0 && v == 0);
    CHECK(nom_price_parse_micro("1000", 4, 1000000000, &v) == 0 && v == 1000000000);
    CHECK(nom_price_parse_micro("1000.000001", 11, 1000000000, &v) == -1);
    CHECK(nom_price_parse_micro("99999999999999999999", 20, INT64_MAX, &v) == -1);
    char buf[32];
    CHECK(strcmp(nom_price_format(10000000, buf, sizeof buf), "10.000000") == 0);
    CHECK(strcmp(nom_price_format(-1500000, buf, sizeof buf), "-1.500000") == 0);
}

/* Is every bad quote rejected with its own reason (negative, absurd, malformed, ...)? */
static void price_rejects(void)
{
    static const struct {
        const char *text, *reason;
    } bad[] = {
        {"resource=bandwidth unit=$/Gbit price=-1.000000 sequence=1", "negative price"},
        {"resource=bandwidth unit=$/Gbit price=1000000 sequence=1", "sanity limit"},
        {"resource=bandwidth unit=$/Gbit price=nan sequence=1", "not a decimal"},
        {"resource=bandwidth unit=$/Gbit price=1e3 sequence=1", "not a decimal"},
        {"resource=bandwidth unit=$/Gbit price=1. sequence=1", "not a decimal"},
        {"resource=bandwidth unit=$/Gbit price= sequence=1", "not a decimal"},
        {"resource=bandwidth unit=$/Gbit sequence=1", "no price= field"},
        {"resource=bandwidth unit=$/Gbit price=1", "no sequence= field"},
        {"resource=bandwidth unit=$/Gbit price=1 price=2 sequence=1", "given twice"},
        {"resource=cpu unit=$/Gbit price=1 sequence=1", "not bandwidth"},
        {"resource=bandwidth unit=$/GB price=1 sequence=1", "not $/Gbit"},
        {"resource=bandwidth unit=$/Gbit price=1 sequence=1.5", "whole number"},
        {"resource=bandwidth unit=$/Gbit price=1 sequence=1 timestamp=yesterday", "Unix"},
        {"resource=bandwidth unit=$/Gbit price=1 sequence=1\nprice=2", "control"},
        {"<html><body>Bad Gateway</body></html>", "not key=value"},
        {"", "empty"},
        {"\n", "empty"},
    };
    struct nom_price_quote q;
    char why[160];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        why[0] = '\0';
        CHECK(parse(bad[i].text, &q, why) == -1);
        CHECK(strstr(why, bad[i].reason) != NULL);
    }
}

/* ---- options -------------------------------------------------------------------------- */

/* Are the defaults the documented ones, and net/'s options left alone? */
static void options_defaults(void)
{
    struct priced_options o;
    char why[160];
    char *argv[] = {"priced", "--nic=4", "--provider=http://10.0.2.2:7070/price.txt",
                    "--ip=10.0.2.15/24", NULL};
    CHECK(priced_options_parse(4, argv, &o, why, sizeof why) == OPTIONS_OK);
    CHECK(o.period_ms == 1000 && o.timeout_ms == 2000 && o.max_backoff_ms == 16000);
    CHECK(o.max_price_micro == 1000000000 && o.url.port == 7070);
}

/* Are the tuning options read, and a long period alone allowed without backoff? */
static void options_values(void)
{
    struct priced_options o;
    char why[160];
    char *argv[] = {"priced", "--provider=http://1.2.3.4/p", "--period-ms=200",
                    "--timeout-ms=500", "--max-backoff-ms=800", "--max-price=2.5", NULL};
    CHECK(priced_options_parse(6, argv, &o, why, sizeof why) == OPTIONS_OK);
    CHECK(o.period_ms == 200 && o.timeout_ms == 500 && o.max_backoff_ms == 800);
    CHECK(o.max_price_micro == 2500000);
    char *slow[] = {"priced", "--provider=http://1.2.3.4/p", "--period-ms=60000", NULL};
    CHECK(priced_options_parse(3, slow, &o, why, sizeof why) == OPTIONS_OK);
    CHECK(o.max_backoff_ms == 60000);
    char *help[] = {"priced", "--help", NULL};
    CHECK(priced_options_parse(2, help, &o, why, sizeof why) == OPTIONS_HELP);
}

/* Is every bad command line refused with a reason naming the option? */
static void options_rejects(void)
{
    static char *const bad[][3] = {
        {"--provider=http://1.2.3.4/", "--bogus"},
        {"--provider=http://1.2.3.4/", "--period-ms=0"},
        {"--provider=http://1.2.3.4/", "--period-ms=abc"},
        {"--provider=http://1.2.3.4/", "--period-ms=99999999999"},
        {"--provider=http://1.2.3.4/", "--timeout-ms=60001"},
        {"--provider=http://1.2.3.4/", "--max-price=-1"},
        {"--provider=http://1.2.3.4/", "--period-ms=1000", "--max-backoff-ms=500"},
        {"--provider=ftp://1.2.3.4/"},
        {"--period-ms=100"},
        {"provider=http://1.2.3.4/"},
    };
    struct priced_options o;
    char why[160];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *argv[5] = {"priced", bad[i][0], bad[i][1], bad[i][2], NULL};
        int argc = 1;
        while (argc < 4 && argv[argc])
            argc++;
        why[0] = '\0';
        CHECK(priced_options_parse(argc, argv, &o, why, sizeof why) == OPTIONS_BAD);
        CHECK(why[0] != '\0');
    }
}

/* ---- retry ---------------------------------------------------------------------------- */

/* Does the delay double per failure up to the cap, and fall back to the period? */
static void retry_backoff(void)
{
    struct retry r;
    static const uint32_t want[] = {1000, 2000, 4000, 8000, 16000, 16000, 16000};
    retry_init(&r, 1000, 16000);
    CHECK(retry_delay_ms(&r) == 1000);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        retry_failed(&r, HTTP_FAIL_UNREACHABLE);
        CHECK(retry_delay_ms(&r) == want[i]);
    }
    CHECK(retry_succeeded(&r) == 7 && retry_delay_ms(&r) == 1000);
    retry_init(&r, 300, 1000);
    retry_failed(&r, 1);
    retry_failed(&r, 1);
    retry_failed(&r, 1);
    CHECK(retry_delay_ms(&r) == 1000);
}

/* Is an episode reported once, again only when its kind changes, and its end counted? */
static void retry_episodes(void)
{
    struct retry r;
    retry_init(&r, 1000, 16000);
    CHECK(retry_succeeded(&r) == 0);
    CHECK(retry_failed(&r, HTTP_FAIL_UNREACHABLE) == 1);
    CHECK(retry_failed(&r, HTTP_FAIL_UNREACHABLE) == 0);
    CHECK(retry_failed(&r, HTTP_FAIL_UNREACHABLE) == 0);
    CHECK(retry_failed(&r, HTTP_FAIL_PROTOCOL) == 1);
    CHECK(retry_failed(&r, HTTP_FAIL_PROTOCOL) == 0);
    CHECK(retry_succeeded(&r) == 5);
    CHECK(retry_failed(&r, HTTP_FAIL_PROTOCOL) == 1);
}

/* ---- subscribers ---------------------------------------------------------------------- */

/* Does the reader take the first bandwidth/Gbit slot, and say when there is none? */
static void slots_bandwidth(void)
{
    struct nom_bb_price slots[NOM_BB_MAX_PRICES] = {0};
    struct nom_price p;
    CHECK(nom_price_from_slots(slots, NOM_BB_MAX_PRICES, &p) == -ENOENT);
    slots[1] = (struct nom_bb_price){.resource = NOM_RES_BANDWIDTH, .unit = 7,
                                     .price_micro = 5};
    slots[2] = (struct nom_bb_price){.resource = NOM_RES_BANDWIDTH, .unit = NOM_UNIT_GBIT,
                                     .price_micro = 10000000, .timestamp_ns = 42,
                                     .sequence = 3};
    CHECK(nom_price_from_slots(slots, NOM_BB_MAX_PRICES, &p) == 0);
    CHECK(p.micro_per_gbit == 10000000 && p.usd_per_gbit == 10.0);
    CHECK(p.timestamp_ns == 42 && p.sequence == 3);
}

static const struct {
    const char *name;
    void (*fn)(void);
} cases[] = {
    {"url_parts", url_parts},
    {"url_rejects", url_rejects},
    {"response_content_length", response_content_length},
    {"response_close_delimited", response_close_delimited},
    {"response_error_status", response_error_status},
    {"response_tolerated", response_tolerated},
    {"response_rejects", response_rejects},
    {"response_truncated", response_truncated},
    {"price_provider_line", price_provider_line},
    {"price_rounding", price_rounding},
    {"price_rejects", price_rejects},
    {"options_defaults", options_defaults},
    {"options_values", options_values},
    {"options_rejects", options_rejects},
    {"retry_backoff", retry_backoff},
    {"retry_episodes", retry_episodes},
    {"slots_bandwidth", slots_bandwidth},
};
CHECK_CASES(cases)

int main(int argc, char **argv)
{
    return check_cases_main(argc, argv);
}
