/* fpu: is each application's SSE state its own? Two instances on one vCPU keep a pattern in
 * xmm0-xmm15 across many time slices (about a second of spinning) and check it is intact. */
#include "ktest.h"

int ktest_main(int argc, char **argv, struct nom_start_info *info) {
    (void)info;
    uint64_t seed = argc > 1 ? (uint64_t)argv[1][0] * 0x0101010101010101ull : 0x5a5a5a5a5a5a5a5aull;
    uint64_t in[2] = {seed, ~seed}, out[2];
    uint64_t end = kt_rdtsc() + kt_tsc_hz(), rounds = 0, bad = 0;
    __asm__ volatile("movdqu %0, %%xmm0" ::"m"(in) : "xmm0");
    while (kt_rdtsc() < end) {
        __asm__ volatile("movdqa %%xmm0, %%xmm15; movdqa %%xmm15, %%xmm1" ::: "xmm1", "xmm15");
        __asm__ volatile("movdqu %%xmm1, %0" : "=m"(out));
        bad += out[0] != in[0] || out[1] != in[1];
        rounds++;
    }
    kt_printf("fpu %s: %lu rounds, %lu corrupted\n", argc > 1 ? argv[1] : "?", rounds, bad);
    return bad != 0;
}
