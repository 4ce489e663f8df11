/* witness: an innocent bystander. Keeps running (sleeping and waking) while other applications
 * crash, and says so at the end. argv[1]: how many 100 ms rounds. */
#include "ktest.h"

int ktest_main(int argc, char **argv, struct nom_start_info *info) {
    (void)info;
    int rounds = argc > 1 ? (int)kt_atou(argv[1]) : 30;
    for (int i = 0; i < rounds; i++)
        kt_sleep_ms(100);
    kt_printf("witness: still alive after %d rounds\n", rounds);
    return 0;
}
