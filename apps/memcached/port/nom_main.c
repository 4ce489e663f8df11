/* nom_main.c: memcached's entry on nom. The link wraps main (-Wl,--wrap=main), so libnom's
 * start-up calls this first: it brings up the application's private network stack (net/,
 * paper 3.6), which takes its options (--ip, --gw, --nic, --batching-delay-us) out of argv,
 * then runs memcached's own main, unmodified, on what is left of the command line.
 *
 * --batching-delay=US is accepted too, as the spelling nhttpd and the experiment runner use for
 * a fixed W (tools/experiment passes it to every application): it is rewritten into net/'s
 * --batching-delay-us=US before nom_net_start() sees argv, so memcached's getopt never does. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <nom/net.h>

#define COMMON_SPELLING "--batching-delay="
#define NET_SPELLING "--batching-delay-us="

int __real_main(int argc, char **argv, char **envp);
int __wrap_main(int argc, char **argv, char **envp);

/* Rewrites --batching-delay=US into --batching-delay-us=US (net/ checks the value). Returns 0,
 * or -1 when out of memory. */
static int rewrite_batching_delay(int argc, char **argv)
{
    size_t skip = strlen(COMMON_SPELLING);
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], COMMON_SPELLING, skip) != 0)
            continue;
        size_t len = strlen(NET_SPELLING) + strlen(argv[i] + skip) + 1;
        char *arg = malloc(len);
        if (!arg)
            return -1;
        snprintf(arg, len, "%s%s", NET_SPELLING, argv[i] + skip);
        argv[i] = arg; /* lives as long as argv: never freed */
    }
    return 0;
}

int __wrap_main(int argc, char **argv, char **envp)
{
    if (rewrite_batching_delay(argc, argv) != 0) {
        fprintf(stderr, "memcached: out of memory reading the command line\n");
        return EX_OSERR;
    }
    int rc = nom_net_start(&argc, argv);
    if (rc != 0) {
        fprintf(stderr, "memcached: network start failed: %s\n", strerror(-rc));
        return rc == -EINVAL ? EX_USAGE : EX_OSERR;
    }
    return __real_main(argc, argv, envp);
}
