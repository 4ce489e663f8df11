/* net_args.c: parses --ip=A/N, --gw=A, --nic=N, --batching-delay=US, --idle-poll-us=US and
 * --no-csum-offload (net_args.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lwip/def.h"
#include "lwip/ip4_addr.h"

#include "net_args.h"

/* A decimal number in [0, max]; -1 if malformed. */
static long parse_number(const char *s, long max)
{
    char *end;
    long v;
    if (*s < '0' || *s > '9')
        return -1;
    v = strtol(s, &end, 10);
    return (*end != '\0' || v > max) ? -1 : v;
}

/* A dotted quad in network byte order, into *out; 0 or -EINVAL. */
static int parse_ip(const char *s, uint32_t *out)
{
    ip4_addr_t a;
    if (!ip4addr_aton(s, &a))
        return -EINVAL;
    *out = ip4_addr_get_u32(&a);
    return 0;
}

/* "A.B.C.D/N" into address and netmask. */
static int parse_cidr(const char *s, struct nom_net_config *cfg)
{
    char buf[32];
    char *slash;
    long prefix = 24;
    if (strlen(s) >= sizeof buf)
        return -EINVAL;
    strcpy(buf, s);
    slash = strchr(buf, '/');
    if (slash != NULL) {
        *slash = '\0';
        prefix = parse_number(slash + 1, 32);
        if (prefix < 1)
            return -EINVAL;
    }
    if (parse_ip(buf, &cfg->ip) != 0 || cfg->ip == 0)
        return -EINVAL;
    cfg->netmask = lwip_htonl((uint32_t)(0xffffffffull << (32 - prefix)));
    return 0;
}

/* Applies one argument if it is ours: 1 used, 0 not ours, -EINVAL malformed. */
static int parse_one(const char *arg, struct nom_net_config *cfg, int *nic)
{
    long v;
    if (strncmp(arg, "--ip=", 5) == 0)
        return parse_cidr(arg + 5, cfg) == 0 ? 1 : -EINVAL;
    if (strncmp(arg, "--gw=", 5) == 0)
        return parse_ip(arg + 5, &cfg->gw) == 0 ? 1 : -EINVAL;
    if (strncmp(arg, "--nic=", 6) == 0) {
        v = parse_number(arg + 6, 65535);
        *nic = (int)v;
        return v < 0 ? -EINVAL : 1;
    }
    if (strncmp(arg, "--batching-delay=", 17) == 0) {
        v = parse_number(arg + 17, 1000000);
        cfg->batching_delay_us = (uint32_t)v;
        cfg->batching_delay_given = 1;
        return v < 0 ? -EINVAL : 1;
    }
    if (strncmp(arg, "--idle-poll-us=", 15) == 0) {
        v = parse_number(arg + 15, 1000000);
        cfg->idle_poll_us = (int32_t)v;
        return v < 0 ? -EINVAL : 1;
    }
    if (strcmp(arg, "--no-csum-offload") == 0) {
        cfg->no_csum_offload = 1;
        return 1;
    }
    return 0;
}

int net_args_parse(int *argc, char **argv, struct nom_net_config *cfg, int *nic)
{
    int out = 1, r;
    memset(cfg, 0, sizeof *cfg);
    cfg->idle_poll_us = -1;
    *nic = -1;
    for (int i = 1; i < *argc; i++) {
        r = parse_one(argv[i], cfg, nic);
        if (r < 0)
            return r;
        if (r == 0)
            argv[out++] = argv[i];
    }
    if (cfg->ip == 0 && cfg->gw != 0)
        return -EINVAL; /* a gateway without a static address */
    *argc = out;
    argv[out] = NULL;
    return 0;
}
