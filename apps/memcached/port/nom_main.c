/* nom_main.c: memcached's entry on nom. The link wraps main (-Wl,--wrap=main), so libnom's
 * start-up calls this first: it brings up the application's private network stack (net/,
 * paper 3.6), which takes its options (--ip, --gw, --nic, --batching-delay-us) out of argv,
 * then runs memcached's own main, unmodified, on what is left of the command line. */
#include <stdio.h>
#include <string.h>
#include <sysexits.h>
#include <nom/net.h>

int __real_main(int argc, char **argv, char **envp);
int __wrap_main(int argc, char **argv, char **envp);

int __wrap_main(int argc, char **argv, char **envp)
{
    int rc = nom_net_start(&argc, argv);
    if (rc != 0) {
        fprintf(stderr, "memcached: network start failed: %s\n", strerror(-rc));
        return EX_OSERR;
    }
    return __real_main(argc, argv, envp);
}
