/* printf.c: vsnprintf for kernel logs: %d %i %u %x %X %p %s %c %%, width, 0-padding, '-',
 * length modifiers l, ll, z. No floating point (the kernel has none). */
#include "defs.h"

struct out { char *buf; size_t size, len; };

static void put(struct out *o, char c) {
    if (o->len + 1 < o->size)
        o->buf[o->len] = c;
    o->len++;
}

static void put_padded(struct out *o, const char *s, size_t n, int width, bool left, char pad) {
    int fill = width > (int)n ? width - (int)n : 0;
    if (!left)
        while (fill-- > 0) put(o, pad);
    for (size_t i = 0; i < n; i++) put(o, s[i]);
    if (left)
        while (fill-- > 0) put(o, ' ');
}

static void put_number(struct out *o, uint64_t v, int base, bool neg, bool upper, int width,
                       bool left, char pad) {
    char tmp[24];
    const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    int n = 0;
    do {
        tmp[n++] = digits[v % base];
        v /= base;
    } while (v);
    if (neg) {
        if (pad == '0') {
            put(o, '-');
            width--;
        } else {
            tmp[n++] = '-';
        }
    }
    char rev[24];
    for (int i = 0; i < n; i++) rev[i] = tmp[n - 1 - i];
    put_padded(o, rev, n, width, left, pad);
}

int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap) {
    struct out o = {buf, size, 0};
    for (; *fmt; fmt++) {
        if (*fmt != '%') {
            put(&o, *fmt);
            continue;
        }
        fmt++;
        bool left = false;
        char pad = ' ';
        for (; *fmt == '-' || *fmt == '0'; fmt++) {
            if (*fmt == '-') left = true;
            else pad = '0';
        }
        int width = 0;
        for (; *fmt >= '0' && *fmt <= '9'; fmt++) width = width * 10 + (*fmt - '0');
        int lng = 0;
        for (; *fmt == 'l' || *fmt == 'z'; fmt++) lng++;
        switch (*fmt) {
        case 'd': case 'i': {
            int64_t v = lng ? va_arg(ap, int64_t) : va_arg(ap, int);
            put_number(&o, v < 0 ? -(uint64_t)v : (uint64_t)v, 10, v < 0, false, width, left, pad);
            break;
        }
        case 'u': case 'x': case 'X': {
            uint64_t v = lng ? va_arg(ap, uint64_t) : va_arg(ap, unsigned);
            put_number(&o, v, *fmt == 'u' ? 10 : 16, false, *fmt == 'X', width, left, pad);
            break;
        }
        case 'p':
            put(&o, '0');
            put(&o, 'x');
            put_number(&o, (uint64_t)va_arg(ap, void *), 16, false, false, width, left, pad);
            break;
        case 's': {
            const char *s = va_arg(ap, const char *);
            if (!s) s = "(null)";
            put_padded(&o, s, strlen(s), width, left, ' ');
            break;
        }
        case 'c':
            put(&o, (char)va_arg(ap, int));
            break;
        case '%':
            put(&o, '%');
            break;
        default:
            put(&o, '%');
            if (*fmt) put(&o, *fmt);
            else fmt--;
        }
    }
    if (size)
        buf[o.len < size ? o.len : size - 1] = 0;
    return (int)o.len;
}

int snprintf(char *buf, size_t size, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    return n;
}
