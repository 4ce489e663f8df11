/* sys_arch.c: the two things lwIP needs from the platform with NO_SYS=1: a millisecond clock
 * (sys_now) for its timers, and random numbers (LWIP_RAND, arch/cc.h). */
#include <stdint.h>

#include "lwip/sys.h"
#include <nom/time.h>

#include "netloop.h"

u32_t nomnet_sys_now_last_ms;
uint64_t nomnet_sys_now_count;

/* Wraps every 49 days; lwIP compares timeouts with wrap-safe differences. */
u32_t sys_now(void)
{
    nomnet_sys_now_count++;
    return nomnet_sys_now_last_ms = (u32_t)(nom_now_ns() / 1000000u);
}

static uint64_t rand_state;

/* xorshift64*: fast, and enough for what lwIP draws (DHCP transaction ids, the first
 * ephemeral port) and for the secret of the sequence-number hash (tcp_hooks.c). */
unsigned int nomnet_rand(void)
{
    if (rand_state == 0)
        rand_state = nom_now_ns() | 1u;
    rand_state ^= rand_state >> 12;
    rand_state ^= rand_state << 25;
    rand_state ^= rand_state >> 27;
    return (unsigned int)((rand_state * 0x2545F4914F6CDD1Dull) >> 32);
}
