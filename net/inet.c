/* inet.c: inet_aton, inet_addr, inet_ntoa, inet_pton, inet_ntop for IPv4 (<arpa/inet.h>), on
 * lwIP's parser and printer so the stack and the applications read addresses alike. */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include "lwip/ip4_addr.h"

int inet_aton(const char *cp, struct in_addr *inp)
{
    ip4_addr_t a;
    if (!ip4addr_aton(cp, &a))
        return 0;
    if (inp != NULL)
        inp->s_addr = ip4_addr_get_u32(&a);
    return 1;
}

in_addr_t inet_addr(const char *cp)
{
    struct in_addr a;
    return inet_aton(cp, &a) ? a.s_addr : (in_addr_t)0xffffffffu; /* INADDR_NONE */
}

char *inet_ntoa(struct in_addr in)
{
    static char buf[16];
    ip4_addr_t a;
    ip4_addr_set_u32(&a, in.s_addr);
    return ip4addr_ntoa_r(&a, buf, sizeof buf);
}

/* inet_pton accepts only the full dotted-decimal form (POSIX), unlike inet_aton. */
static int dotted_quad(const char *s)
{
    int parts = 0, digits = 0, value = 0;
    for (;; s++) {
        if (*s >= '0' && *s <= '9') {
            if (digits > 0 && value == 0)
                return 0; /* leading zero: octal in inet_aton, rejected here */
            value = value * 10 + (*s - '0');
            if (++digits > 3 || value > 255)
                return 0;
        } else if ((*s == '.' || *s == '\0') && digits > 0) {
            parts++;
            digits = value = 0;
            if (*s == '\0')
                return parts == 4;
        } else {
            return 0;
        }
    }
}

int inet_pton(int af, const char *src, void *dst)
{
    struct in_addr a;
    if (af != AF_INET) {
        errno = EAFNOSUPPORT;
        return -1;
    }
    if (!dotted_quad(src) || !inet_aton(src, &a))
        return 0;
    memcpy(dst, &a, sizeof a);
    return 1;
}

const char *inet_ntop(int af, const void *src, char *dst,
                                           socklen_t size)
{
    ip4_addr_t a;
    uint32_t v;
    if (af != AF_INET) {
        errno = EAFNOSUPPORT;
        return NULL;
    }
    memcpy(&v, src, sizeof v);
    ip4_addr_set_u32(&a, v);
    if (ip4addr_ntoa_r(&a, dst, (int)size) == NULL) {
        errno = ENOSPC;
        return NULL;
    }
    return dst;
}
