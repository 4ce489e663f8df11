/* ktest.c: start-up, printing and helpers for the kernel's test applications (see ktest.h). */
#include "ktest.h"

void *memset(void *d, int c, size_t n);
void *memcpy(void *d, const void *s, size_t n);

void *kt_memset(void *d, int c, size_t n) {
    unsigned char *p = d;
    while (n--) *p++ = (unsigned char)c;
    return d;
}
void *kt_memcpy(void *d, const void *s, size_t n) {
    unsigned char *p = d;
    const unsigned char *q = s;
    while (n--) *p++ = *q++;
    return d;
}
/* gcc may emit calls to these for struct copies. */
void *memset(void *d, int c, size_t n) { return kt_memset(d, c, n); }
void *memcpy(void *d, const void *s, size_t n) { return kt_memcpy(d, s, n); }

int kt_strcmp(const char *a, const char *b) {
    while (*a && *a == *b) a++, b++;
    return (unsigned char)*a - (unsigned char)*b;
}

static size_t fmt_num(char *out, uint64_t v, int base, int width, char pad, int neg) {
    char tmp[24];
    size_t n = 0, k = 0;
    do { tmp[n++] = "0123456789abcdef"[v % base]; v /= base; } while (v);
    if (neg) tmp[n++] = '-';
    while ((int)n < width) tmp[n++] = pad;
    while (n) out[k++] = tmp[--n];
    return k;
}

void kt_printf(const char *fmt, ...) {
    char buf[512];
    size_t len = 0;
    va_list ap;
    va_start(ap, fmt);
    for (; *fmt && len < sizeof buf - 32; fmt++) {
        if (*fmt != '%') { buf[len++] = *fmt; continue; }
        fmt++;
        char pad = ' ';
        int width = 0, lng = 0;
        if (*fmt == '0') pad = '0', fmt++;
        while (*fmt >= '0' && *fmt <= '9') width = width * 10 + (*fmt++ - '0');
        while (*fmt == 'l') lng = 1, fmt++;
        switch (*fmt) {
        case 'd': { int64_t v = lng ? va_arg(ap, int64_t) : va_arg(ap, int);
                    len += fmt_num(buf + len, v < 0 ? -(uint64_t)v : (uint64_t)v, 10, width, pad, v < 0); break; }
        case 'u': { uint64_t v = lng ? va_arg(ap, uint64_t) : va_arg(ap, unsigned);
                    len += fmt_num(buf + len, v, 10, width, pad, 0); break; }
        case 'x': { uint64_t v = lng ? va_arg(ap, uint64_t) : va_arg(ap, unsigned);
                    len += fmt_num(buf + len, v, 16, width, pad, 0); break; }
        case 's': {
            const char *s = va_arg(ap, const char *);
            while (*s && len < sizeof buf - 32)
                buf[len++] = *s++;
            break;
        }
        case 'c': buf[len++] = (char)va_arg(ap, int); break;
        default: buf[len++] = *fmt;
        }
    }
    va_end(ap);
    SYS(NOM_SYS_CONSOLE_WRITE, buf, len);
}

_Noreturn void kt_exit(int64_t status) {
    SYS(NOM_SYS_EXIT, status);
    for (;;) ;
}

uint64_t kt_rdtsc(void) {
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}

uint64_t kt_tsc_hz(void) { return BB->tsc_hz; }

void kt_sleep_ms(uint64_t ms) {
    uint64_t deadline = kt_rdtsc() + kt_tsc_hz() / 1000 * ms;
    while (kt_rdtsc() < deadline)
        SYS(NOM_SYS_BLOCK, deadline);
}

int kt_bb_snapshot(struct nom_bb *out) {
    for (int tries = 0;; tries++) {
        uint64_t g = BB->generation;
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        kt_memcpy(out, (const void *)BB, sizeof *out);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (!(g & 1) && BB->generation == g)
            return tries;
    }
}

uint64_t kt_rand_r(uint64_t *state) {
    uint64_t s = *state ? *state : 0x9e3779b97f4a7c15ull; /* xorshift never leaves 0 */
    s ^= s << 13; s ^= s >> 7; s ^= s << 17;
    return *state = s;
}

uint64_t kt_rand(void) {
    static uint64_t s;
    return kt_rand_r(&s);
}

uint64_t kt_atou(const char *s) {
    uint64_t v = 0;
    while (*s >= '0' && *s <= '9')
        v = v * 10 + (uint64_t)(*s++ - '0');
    return v;
}

void ktest_start(struct nom_start_info *info) {
    kt_exit(ktest_main((int)info->argc, info->argv, info));
}
