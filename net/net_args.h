/* net_args.h: the network options of an application's command line (nom/net.h lists them). */
#ifndef NOM_NET_ARGS_H
#define NOM_NET_ARGS_H

#include <nom/net.h>

/* Fills cfg (zeroed first) and *nic (-1: first free) from argv, and removes the options it
 * used from argv, shifting the rest down and updating *argc (argv[*argc] stays NULL).
 * Returns 0, or -EINVAL naming nothing more: a malformed address, prefix or number. */
int net_args_parse(int *argc, char **argv, struct nom_net_config *cfg, int *nic);

#endif /* NOM_NET_ARGS_H */
