/* fuzz: system calls with garbage arguments. Every one must come back with a result (usually an
 * error) and leave the kernel and every other application running.
 * argv: fuzz [CALLS [SEED [CORES]]]: CALLS per core (default 4000), SEED for the xorshift stream
 * (default: the fixed one), CORES 2 runs a second context on another vCPU with its own stream,
 * so that calls race on the application's one address space (mem_map/unmap, shootdowns).
 * Calls that would legitimately end this application or one of its contexts are left out or
 * aimed elsewhere: exit, core_release, core_acquire (starts code at a random address), block
 * (sleeps a random time), upcall_return (resumes registers from a random frame), upcall_register
 * with an entry (a later timer or notification would jump there), mem_unmap/mem_protect on this
 * program (text, data, stack), a pointer the kernel writes through aimed into this program's
 * data. console_write lengths are kept under 256 so that the console stays readable. */
#include "ktest.h"

extern char _end[]; /* the linker's: end of this program's data and bss */

static const uint64_t interesting[] = {
    0, 1, 2, 7, 0xff, 0x1000, 0xfff, 0x7fffffff, 0xffffffff, 0x100000000ull, ~0ull, ~0ull - 4095,
    0x8000000000000000ull, 0xffff800000000000ull, 0xffffffff80000000ull, NOM_BB_ADDR,
    NOM_DEVICE_WINDOW, NOM_USER_MAX, NOM_USER_MAX - 4096, 0x50000000, 0x50001000,
};

struct stream {
    uint64_t rand;
    uint64_t calls, errors;
};

static uint64_t garbage(struct stream *s) {
    uint64_t r = kt_rand_r(&s->rand);
    switch (r % 4) {
    case 0: return interesting[(r >> 8) % (sizeof interesting / sizeof interesting[0])];
    case 1: return r >> 40;
    case 2: return (r >> 8) & 0xffff;
    default: return kt_rand_r(&s->rand);
    }
}

static int in_program(uint64_t p) {
    return p >= NOM_USER_MIN && p < (uint64_t)_end + 4096;
}

static int skipped(uint64_t n, const uint64_t *a) {
    switch (n) {
    case NOM_SYS_EXIT: case NOM_SYS_CORE_RELEASE: case NOM_SYS_CORE_ACQUIRE: case NOM_SYS_BLOCK:
    case NOM_SYS_UPCALL_RETURN:
        return 1;
    case NOM_SYS_UPCALL_REGISTER: return a[0] != 0 || in_program(a[2]);
    case NOM_SYS_DEVICE_ACQUIRE: return in_program(a[1]);
    case NOM_SYS_MEM_UNMAP: case NOM_SYS_MEM_PROTECT:
        return a[0] < 0x1000000 || a[0] >= NOM_DEVICE_WINDOW;
    default: return 0;
    }
}

static void fuzz_calls(struct stream *s, uint64_t count) {
    while (s->calls < count) {
        uint64_t n = kt_rand_r(&s->rand) % (NOM_SYS_COUNT + 4), a[6];
        for (int i = 0; i < 6; i++)
            a[i] = garbage(s);
        if (skipped(n, a))
            continue;
        if (n == NOM_SYS_CONSOLE_WRITE)
            a[1] &= 0xff;
        int64_t r = sys6(n, a[0], a[1], a[2], a[3], a[4], a[5]);
        s->calls++;
        s->errors += r < 0;
    }
}

static struct stream second;
static uint64_t second_count;
static volatile int second_done;
static uint8_t second_stack[16384] __attribute__((aligned(16)));

void second_context(uint64_t unused) {
    (void)unused;
    fuzz_calls(&second, second_count);
    second_done = 1;
    SYS(NOM_SYS_CORE_RELEASE, 0);
    for (;;) ;
}

int ktest_main(int argc, char **argv, struct nom_start_info *info) {
    uint64_t count = argc > 1 ? kt_atou(argv[1]) : 4000, seed = argc > 2 ? kt_atou(argv[2]) : 0;
    int cores = argc > 3 ? (int)kt_atou(argv[3]) : 1;
    struct stream first = {.rand = seed};
    int64_t cpu2 = -1;
    if (cores == 2) {
        second = (struct stream){.rand = seed * 0x9e3779b97f4a7c15ull + 1};
        second_count = count;
        cpu2 = SYS(NOM_SYS_CORE_ACQUIRE, second_context, second_stack + sizeof second_stack, 0);
        if (cpu2 < 0) {
            kt_printf("fuzz: no second core (%ld)\n", cpu2);
            return 1;
        }
    }
    fuzz_calls(&first, count);
    while (cpu2 >= 0 && !second_done)
        SYS(NOM_SYS_YIELD, 0);
    /* A newline first: garbage console writes leave the line unfinished. */
    if (cpu2 >= 0)
        kt_printf("\nfuzz: %lu calls on cpu %u and cpu %ld, seed %lu, %lu errors, survived\n",
                  first.calls + second.calls, info->cpu, cpu2, seed, first.errors + second.errors);
    else
        kt_printf("\nfuzz: %lu calls, %lu errors, survived\n", first.calls, first.errors);
    return 0;
}
