/* ktest.h: the tiny freestanding runtime of the kernel's test applications. They deliberately
 * avoid libnom so that the kernel's tests depend on nothing but the ABI (abi.h): raw system
 * calls, a few print helpers, and a start routine that calls ktest_main(argc, argv, info). */
#ifndef KTEST_H
#define KTEST_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include "nom/abi.h"

static inline int64_t sys6(uint64_t n, uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e, uint64_t f) {
    register uint64_t r10 __asm__("r10") = d, r8 __asm__("r8") = e, r9 __asm__("r9") = f;
    int64_t ret;
    __asm__ volatile("syscall" : "=a"(ret) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return ret;
}
#define SYS(n, ...) ktest_sys(n, __VA_ARGS__, 0, 0, 0, 0, 0, 0)
#define ktest_sys(n, a, b, c, d, e, f, ...) sys6((n), (uint64_t)(a), (uint64_t)(b), (uint64_t)(c), (uint64_t)(d), (uint64_t)(e), (uint64_t)(f))

int ktest_main(int argc, char **argv, struct nom_start_info *info);
void kt_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
_Noreturn void kt_exit(int64_t status);
uint64_t kt_rdtsc(void);
uint64_t kt_tsc_hz(void);
void kt_sleep_ms(uint64_t ms);
void *kt_memset(void *d, int c, size_t n);
void *kt_memcpy(void *d, const void *s, size_t n);
int kt_strcmp(const char *a, const char *b);
int kt_bb_snapshot(struct nom_bb *out); /* retries until consistent; returns retries */
uint64_t kt_rand(void);                     /* one shared xorshift64 stream, fixed seed */
uint64_t kt_rand_r(uint64_t *state);         /* a caller's own stream; state 0 = the default seed */
uint64_t kt_atou(const char *s);             /* leading decimal digits; 0 if none */

#define BB ((const volatile struct nom_bb *)NOM_BB_ADDR)

#endif
