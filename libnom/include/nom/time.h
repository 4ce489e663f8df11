/*
 * nom/time.h: time from the TSC, without system calls (abi.h: the TSC is invariant and its
 * frequency is published on the bulletin board, nom_bb.tsc_hz).
 *
 * Contract: nom_tsc() is the raw TSC (rdtsc; ordered after earlier loads, so it never runs
 * ahead of the code before it). nom_now_ns() is monotonic nanoseconds since the kernel
 * booted (nom_bb.boot_tsc), never going backwards on one core; on several cores it relies on
 * the invariant, synchronized TSC the kernel checks at boot. Conversions round down. All
 * functions are safe in upcall context and need no initialization beyond the bulletin board
 * being mapped (always true in a nom application).
 */
#ifndef NOM_TIME_H
#define NOM_TIME_H

#include <stdint.h>

/* Reads the time-stamp counter. */
static inline uint64_t nom_tsc(void)
{
    uint32_t lo, hi;
    __asm__ volatile("lfence; rdtsc" : "=a"(lo), "=d"(hi) :: "memory");
    return ((uint64_t)hi << 32) | lo;
}

/* TSC ticks per second, from the bulletin board. */
uint64_t nom_tsc_hz(void);
/* Monotonic nanoseconds since boot. */
uint64_t nom_now_ns(void);
/* TSC ticks in us microseconds (saturates at UINT64_MAX). */
uint64_t nom_us_to_tsc(uint64_t us);
/* TSC ticks in ns nanoseconds (saturates). */
uint64_t nom_ns_to_tsc(uint64_t ns);
/* Nanoseconds in ticks TSC ticks (saturates). */
uint64_t nom_tsc_to_ns(uint64_t ticks);
/* The TSC value at which nom_now_ns() reads ns (saturates). */
uint64_t nom_ns_to_deadline(uint64_t ns);

#endif /* NOM_TIME_H */
