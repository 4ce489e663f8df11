/* nicmac: can an application acquire every virtio-net NIC, read its MAC from the device's own
 * configuration space through the BAR the kernel mapped, and keep it while someone else tries?
 * argv[1] = "own": acquire, print MACs, hold them 3 s, release. "steal": after 1 s, try to
 * acquire each NIC and print the (expected) refusal. */
#include "virtio_min.h"

static struct nom_bb bb;

int ktest_main(int argc, char **argv, struct nom_start_info *info) {
    (void)info;
    int steal = argc > 1 && kt_strcmp(argv[1], "steal") == 0;
    if (steal)
        kt_sleep_ms(1000);
    kt_bb_snapshot(&bb);
    int found = 0;
    for (uint32_t i = 0; i < bb.ndevices; i++) {
        if (!is_virtio_net(&bb.devices[i]))
            continue;
        found++;
        struct vdev v = {.index = i};
        int64_t r = SYS(NOM_SYS_DEVICE_ACQUIRE, i, &v.grant);
        if (steal) {
            kt_printf("nicmac-steal: dev %u acquire %s (%ld), owner %u\n", i,
                      r == -NOM_EBUSY ? "refused" : "ALLOWED", r, BB->devices[i].owner);
            continue;
        }
        if (r < 0 || vdev_map(&v) < 0) {
            kt_printf("nicmac: dev %u acquire failed %ld\n", i, r);
            return 1;
        }
        kt_printf("nicmac: dev %u owner %u mac %02x:%02x:%02x:%02x:%02x:%02x\n", i, BB->devices[i].owner,
                  v.device_cfg[0], v.device_cfg[1], v.device_cfg[2], v.device_cfg[3],
                  v.device_cfg[4], v.device_cfg[5]);
    }
    kt_printf("nicmac%s: %d virtio-net devices\n", steal ? "-steal" : "", found);
    if (!steal) {
        kt_sleep_ms(3000);
        for (uint32_t i = 0; i < bb.ndevices; i++)
            if (is_virtio_net(&bb.devices[i]))
                SYS(NOM_SYS_DEVICE_RELEASE, i);
    }
    return 0;
}
