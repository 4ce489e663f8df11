/* in6addr.c: the two IPv6 address constants <netinet/in.h> promises (POSIX). */
#include <netinet/in.h>

const struct in6_addr in6addr_any = IN6ADDR_ANY_INIT;
const struct in6_addr in6addr_loopback = IN6ADDR_LOOPBACK_INIT;
