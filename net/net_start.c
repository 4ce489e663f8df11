/* net_start.c: nom_net_start(), the one call an application makes to get its network (nom/net.h):
 * its command-line options, its NIC (drivers/virtio-net on nom), then nom_net_attach(). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <nom/net.h>
#include <nom/sched.h>

#include "adapt_stack.h"
#include "net_args.h"
#include "netloop.h"
#include "vnet_nom.h"

int nom_net_start(int *argc, char **argv)
{
    struct nom_net_config cfg;
    struct vnet_config vcfg = { 0 };
    struct vnet *dev;
    int nic, r;

    if (net_args_parse(argc, argv, &cfg, &nic) != 0) {
        printf("net: bad option (use --ip=A.B.C.D/N --gw=A.B.C.D --nic=N "
               "--batching-delay=US --idle-poll-us=US --no-csum-offload)\n");
        return -EINVAL;
    }
    if (cfg.idle_poll_us >= 0)
        nom_sched_set_idle_poll_us((uint64_t)cfg.idle_poll_us);
    vcfg.batching_delay_us = cfg.batching_delay_us;
    vcfg.csum_offload = !cfg.no_csum_offload;
    r = vnet_nom_open(&dev, nic, &vcfg);
    if (r != 0) {
        printf("net: no virtio-net NIC (driver error %d)\n", r);
        return -ENODEV;
    }
    r = nom_net_attach(dev, &cfg);
    if (r == 0 || r == -ETIMEDOUT) {
        atexit(netloop_drain); /* the last answers leave before the kernel resets the NIC */
        /* libnom's controller may now steer W, unless the command line fixed it */
        net_adapt_stack_register(cfg.batching_delay_given ? (long)cfg.batching_delay_us : -1);
    }
    if (r == -ETIMEDOUT)
        printf("net: no DHCP lease yet; still trying\n");
    else if (r != 0)
        vnet_nom_close(dev); /* the stack never started on it: give the NIC back */
    return r;
}
