/* nom_main.c: memcached's entry on nom. The link wraps main (-Wl,--wrap=main), so libnom's
 * start-up calls this first: it brings up the application's private network stack (net/,
 * paper 3.6), which takes its options (--ip, --gw, --nic, --batching-delay) out of argv,
 * then the profit-maximizing controller (nom/adapt.h, paper 6.5: --utility=, --adapt,
 * --adapt-mode=; a --batching-delay=US the stack took keeps W fixed at US), then runs
 * memcached's own main, unmodified, on what is left. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sysexits.h>
#include <nom/adapt.h>
#include <nom/net.h>

int __real_main(int argc, char **argv, char **envp);
int __wrap_main(int argc, char **argv, char **envp);

int __wrap_main(int argc, char **argv, char **envp)
{
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
