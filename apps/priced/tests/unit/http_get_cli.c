/* http_get_cli.c: priced's HTTP client on the host, for tests/test_http_host.py, which points
 * it at servers that misbehave in every way it must survive. `http_get_host URL TIMEOUT_MS`
 * prints "ok STATUS BODY-LENGTH" and the body, or "fail KIND: reason" (exit 1). */
#include <stdio.h>
#include <stdlib.h>

#include "http_client.h"

static const char *const kinds[] = {"ok", "unreachable", "timeout", "protocol", "status"};

int main(int argc, char **argv)
{
    static struct http_response r;
    struct http_url url;
    char why[160];
    if (argc != 3) {
        fprintf(stderr, "usage: http_get_host URL TIMEOUT_MS\n");
        return 2;
    }
    if (http_url_parse(argv[1], &url, why, sizeof why) != 0) {
        printf("bad url: %s\n", why);
        return 2;
    }
    enum http_failure f = http_get(&url, (uint32_t)atoi(argv[2]), &r, why, sizeof why);
    if (f != HTTP_OK) {
        printf("fail %s: %s\n", kinds[f], why);
        return 1;
    }
    printf("ok %d %zu\n%s", r.status, r.body_len, r.body);
    return 0;
}
