/* The physical frame allocator (frame.c) on a pretend machine: each case prints PASS/FAIL. */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "frame.h"

#define MiB (1ull << 20)
static jmp_buf bug_jump;
static int zeroed;

void frame_zero(uint64_t pa, uint64_t n) { (void)pa; zeroed += (int)n; }
_Noreturn void frame_bug(const char *what, uint64_t pa) { (void)what; (void)pa; longjmp(bug_jump, 1); }

static int failures;
static void check(int ok, const char *name) {
    printf("%s %s\n", ok ? "PASS" : "FAIL", name);
    failures += !ok;
}

/* 64 MiB of RAM with a hole, the first MiB and a "kernel" reserved. */
static void machine(void) {
    frame_init(64 * MiB);
    frame_free_range(0, 40 * MiB);
    frame_free_range(48 * MiB, 64 * MiB);
    frame_reserve_range(0, 1 * MiB);
    frame_reserve_range(1 * MiB, 3 * MiB + 100);
}

int main(void) {
    machine();
    uint64_t expect = (40 - 3) * 256 - 1 + 16 * 256; /* 3 MiB + 100 bytes reserves one more frame */
    check(frame_count_free() == expect && frame_count_total() == expect, "counts_after_init");

    static uint8_t seen[64 * 256];
    uint64_t n = 0, pa, bad = 0;
    zeroed = 0;
    while ((pa = frame_alloc()) != 0) {
        uint64_t f = pa / FRAME_SIZE;
        if (pa % FRAME_SIZE || seen[f] || pa < 3 * MiB || (pa >= 40 * MiB && pa < 48 * MiB) || pa >= 64 * MiB)
            bad++;
        seen[f] = 1;
        n++;
    }
    check(n == expect && bad == 0, "alloc_all_distinct_and_only_ram");
    check(frame_count_free() == 0 && zeroed == (int)expect, "every_frame_zeroed_and_none_left");

    frame_free(5 * MiB);
    frame_free(5 * MiB + FRAME_SIZE);
    check(frame_alloc() == 5 * MiB && frame_alloc() == 5 * MiB + FRAME_SIZE, "freed_frames_come_back_lowest_first");

    machine();
    uint64_t c = frame_alloc_contig(300);
    int contiguous_free = 1;
    for (uint64_t i = 0; i < 300; i++)
        if (frame_alloc_contig(1) == c + i * FRAME_SIZE) contiguous_free = 0;
    check(c >= 3 * MiB && c + 300 * FRAME_SIZE <= 40 * MiB && contiguous_free, "contig_run_is_in_one_ram_range");
    check(frame_alloc_contig(20000) == 0, "contig_larger_than_any_range_fails");
    check(frame_alloc_contig(0) == 0, "contig_zero_frames_is_an_error");

    int caught = 0;
    if (setjmp(bug_jump) == 0) frame_free(5 * MiB + 12); else caught++;      /* misaligned */
    if (setjmp(bug_jump) == 0) frame_free(128 * MiB); else caught++;         /* beyond RAM */
    uint64_t once = frame_alloc();
    frame_free(once);
    if (setjmp(bug_jump) == 0) frame_free(once); else caught++;              /* double free */
    check(caught == 3, "bad_frees_are_reported");
    return failures != 0;
}
