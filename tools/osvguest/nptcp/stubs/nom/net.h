/* nom/net.h for NPtcp on OSv (tools/osvguest/nptcp/README.md): OSv brings its own network up
 * before the program starts (its --ip= option), so there is nothing to start and no option of
 * nom's network to take out of argv. */
#ifndef NOM_NET_H
#define NOM_NET_H

static inline int nom_net_start(int *argc, char **argv)
{
    (void)argc;
    (void)argv;
    return 0;
}

#endif /* NOM_NET_H */
