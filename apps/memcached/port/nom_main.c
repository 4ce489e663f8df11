/* nom_main.c: memcached's entry on nom. The link wraps main (-Wl,--wrap=main), so libnom's
 * start-up calls this first: it brings up the application's private network stack (net/,
 * paper 3.6), which takes its options (--ip, --gw, --nic, --batching-delay-us) out of argv,
 * then the profit-maximizing controller (nom/adapt.h, paper 6.5: --utility=, --adapt,
 * --batching-delay=), then runs memcached's own main, unmodified, on what is left.
 *
 * --batching-delay=US, the spelling nhttpd and the experiment runner use for a fixed W, is the
 * controller's; net/'s --batching-delay-us=US is added beside it so that the stack starts at
 * that W (its console line says so) and the controller then keeps it there. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <nom/adapt.h>
#include <nom/net.h>

#define COMMON_SPELLING "--batching-delay="
#define NET_SPELLING "--batching-delay-us="

int __real_main(int argc, char **argv, char **envp);
int __wrap_main(int argc, char **argv, char **envp);

/* A copy of argv with --batching-delay-us=US appended for each --batching-delay=US (net/ checks
 * the value). Returns the new argv (lives as long as the program: never freed), or NULL when
 * out of memory. */
static char **add_net_spelling(int *argc, char **argv)
{
    size_t skip = strlen(COMMON_SPELLING);
    int n = *argc;
    char **out = malloc(sizeof *out * (2 * (size_t)n + 1));
    if (!out)
        return NULL;
    memcpy(out, argv, sizeof *out * (size_t)n);
    for (int i = 1; i < *argc; i++) {
        if (strncmp(argv[i], COMMON_SPELLING, skip) != 0)
            continue;
        size_t len = strlen(NET_SPELLING) + strlen(argv[i] + skip) + 1;
        if (!(out[n] = malloc(len)))
            return NULL;
        snprintf(out[n++], len, "%s%s", NET_SPELLING, argv[i] + skip);
    }
    out[n] = NULL;
    *argc = n;
    return out;
}

int __wrap_main(int argc, char **argv, char **envp)
{
    if (!(argv = add_net_spelling(&argc, argv))) {
        fprintf(stderr, "memcached: out of memory reading the command line\n");
        return EX_OSERR;
    }
    int rc = nom_net_start(&argc, argv);
    if (rc != 0) {
        fprintf(stderr, "memcached: network start failed: %s\n", strerror(-rc));
        return rc == -EINVAL ? EX_USAGE : EX_OSERR;
    }
    rc = nom_adapt_start(&argc, argv, &nom_adapt_profile);
    if (rc != 0) {
        fprintf(stderr, "memcached: controller start failed: %s\n", strerror(-rc));
        return rc == -EINVAL ? EX_USAGE : EX_OSERR;
    }
    return __real_main(argc, argv, envp);
}
