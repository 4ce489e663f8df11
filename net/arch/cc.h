/*
 * arch/cc.h: lwIP's compiler/platform glue for nom (and for the host unit tests, which build
 * the same port with the host's libc).
 *
 * DESIGN.md "Toolchain facts": define SSIZE_MAX (newlib's <limits.h> lacks it, and without it
 * lwIP's arch.h would typedef its own ssize_t, clashing with newlib's); never define
 * BYTE_ORDER (lwIP defaults to little endian, and libc headers may define it themselves).
 * NO_SYS=1, so LWIP_TIMEVAL_PRIVATE/LWIP_ERRNO_STDINCLUDE (socket-API options) do not apply.
 */
#ifndef NOM_LWIP_ARCH_CC_H
#define NOM_LWIP_ARCH_CC_H

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef SSIZE_MAX
#define SSIZE_MAX LONG_MAX
#endif

/* The stack's random numbers: TCP initial sequence numbers, DHCP transaction ids, ephemeral
 * ports. xorshift seeded from the clock at nom_net_start (net/sys_arch.c). */
unsigned int nomnet_rand(void);
#define LWIP_RAND() ((u32_t)nomnet_rand())

/* Byte order (x86 is little endian): the compiler's byte swaps, one instruction each, in
 * place of lwIP's out-of-line lwip_htons/lwip_htonl (def.c), which were called a dozen times
 * a segment: 72 guest instructions per NetPIPE round trip for lwip_htons alone (issue 16,
 * tools/bench/per_request.py). Defined here, def.h declares and def.c defines neither. */
#define lwip_htons(x) ((u16_t)__builtin_bswap16((u16_t)(x)))
#define lwip_htonl(x) ((u32_t)__builtin_bswap32((u32_t)(x)))

/* The internet checksum's sum, eight bytes a step (chksum.c), in place of lwIP's
 * standard_chksum (LWIP_CHKSUM_ALGORITHM is then unused). */
#define LWIP_CHKSUM nomnet_chksum
unsigned short nomnet_chksum(const void *data, int len);

/* Diagnostics go to the application's console (stdout is the serial line on nom). An lwIP
 * assertion is a broken invariant inside the stack: stop the application with a tag rather
 * than run on with corrupted pcbs (STYLE.md). */
#define LWIP_PLATFORM_DIAG(x) do { printf x; } while (0)
#define LWIP_PLATFORM_ASSERT(x) do { \
        printf("lwip: assertion \"%s\" failed at %s:%d\n", (x), __FILE__, __LINE__); \
        fflush(stdout); abort(); } while (0)

#endif
