/* fuzz: thousands of system calls with garbage arguments. Every one must come back with a
 * result (usually an error) and leave the kernel and every other application running. Calls
 * that would legitimately end this application (exit, core_release), start code at a random
 * address (core_acquire), sleep for a random time (block) or unmap this program's own memory
 * are left out or aimed elsewhere. */
#include "ktest.h"

static const uint64_t interesting[] = {
    0, 1, 2, 7, 0xff, 0x1000, 0xfff, 0x7fffffff, 0xffffffff, 0x100000000ull, ~0ull, ~0ull - 4095,
    0x8000000000000000ull, 0xffff800000000000ull, 0xffffffff80000000ull, NOM_BB_ADDR,
    NOM_DEVICE_WINDOW, NOM_USER_MAX, NOM_USER_MAX - 4096, 0x50000000, 0x50001000,
};

static uint64_t garbage(void) {
    uint64_t r = kt_rand();
    switch (r % 4) {
    case 0: return interesting[(r >> 8) % (sizeof interesting / sizeof interesting[0])];
    case 1: return r >> 40;
    case 2: return (r >> 8) & 0xffff;
    default: return kt_rand();
    }
}

static int skipped(uint64_t n, uint64_t a0) {
    if (n == NOM_SYS_EXIT || n == NOM_SYS_CORE_RELEASE || n == NOM_SYS_CORE_ACQUIRE ||
        n == NOM_SYS_BLOCK)
        return 1;
    /* Do not unmap or protect this program (text, data, stack). */
    if ((n == NOM_SYS_MEM_UNMAP || n == NOM_SYS_MEM_PROTECT) && (a0 < 0x1000000 || a0 >= NOM_DEVICE_WINDOW))
        return 1;
    return 0;
}

int ktest_main(int argc, char **argv, struct nom_start_info *info) {
    (void)argc, (void)argv, (void)info;
    int calls = 0, errors = 0, count = 4000;
    while (calls < count) {
        uint64_t n = kt_rand() % (NOM_SYS_COUNT + 4);
        uint64_t a[6];
        for (int i = 0; i < 6; i++)
            a[i] = garbage();
        if (skipped(n, a[0]))
            continue;
        int64_t r = sys6(n, a[0], a[1], a[2], a[3], a[4], a[5]);
        calls++;
        errors += r < 0;
    }
    kt_printf("fuzz: %d calls, %d errors, survived\n", calls, errors);
    return 0;
}
