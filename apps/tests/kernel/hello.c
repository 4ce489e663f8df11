/* hello: does an application start in ring 3 with its arguments, environment and a readable,
 * consistent bulletin board? Prints what it sees for the test to compare with the boot log. */
#include "ktest.h"

static struct nom_bb bb;

int ktest_main(int argc, char **argv, struct nom_start_info *info) {
    for (int i = 0; i < argc; i++)
        kt_printf("hello: argv[%d]=%s\n", i, argv[i]);
    for (char **e = info->envp; *e; e++)
        kt_printf("hello: env %s\n", *e);
    uint64_t cs;
    __asm__ volatile("movq %%cs, %0" : "=r"(cs));
    kt_bb_snapshot(&bb);
    kt_printf("hello: app id %u ring %u\n", info->app_id, (unsigned)(cs & 3));
    kt_printf("hello: bb magic %s abi %u cpus %u devices %u tsc_hz %lu\n",
              bb.magic == NOM_BB_MAGIC ? "ok" : "BAD", bb.abi_version, bb.ncpus, bb.ndevices, bb.tsc_hz);
    for (uint32_t i = 0; i < bb.ncpus; i++)
        kt_printf("hello: cpu %u %s\n", i, bb.cpus[i].online ? "online" : "offline");
    for (uint32_t i = 0; i < bb.ndevices; i++)
        kt_printf("hello: pci %u %04x:%04x\n", i, bb.devices[i].vendor, bb.devices[i].device);
    kt_printf("hello: app %s state %u\n", bb.apps[info->app_id - 1].name, bb.apps[info->app_id - 1].state);
    return 0;
}
