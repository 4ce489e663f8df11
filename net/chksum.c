/*
 * chksum.c: the internet checksum's sum for lwIP (LWIP_CHKSUM, arch/cc.h), eight bytes at a
 * time. Where the device offloads TCP/UDP sums, what lwIP still sums are IPv4 headers, 20
 * bytes each way per segment: lwIP's algorithm 3 (32 bits a step, aligning its pointer first)
 * took 80 guest instructions for one, 160 per NetPIPE round trip (issue 16). Without offload
 * (QEMU user networking) it sums whole segments, where eight bytes a step also pays.
 *
 * What it returns is lwIP's standard_chksum's: the 16-bit one's-complement sum of the data
 * taken as 16-bit words in network order, uncomplemented, as a u16_t that reads in network
 * order when stored. x86 loads are little endian and one's-complement addition commutes with
 * a byte swap, so summing little-endian loads and folding gives exactly that, whatever the
 * pointer's alignment (an odd trailing byte is the high byte of a zero-padded word: its value
 * as a little-endian load).
 */
#include <stdint.h>
#include <string.h>

#include "lwip/arch.h"

static inline uint64_t add_carry(uint64_t sum, uint64_t v)
{
    sum += v;
    return sum + (sum < v); /* end-around carry */
}

u16_t nomnet_chksum(const void *data, int len)
{
    const uint8_t *p = data;
    uint64_t sum = 0, v;
    if (len == 20) { /* an IPv4 header without options, the common case: unrolled */
        uint64_t a, b;
        uint32_t c;
        memcpy(&a, p, 8);
        memcpy(&b, p + 8, 8);
        memcpy(&c, p + 16, 4);
        sum = add_carry(add_carry(a, b), c);
        len = 0;
    }
    for (; len >= 8; p += 8, len -= 8) {
        memcpy(&v, p, 8);
        sum = add_carry(sum, v);
    }
    if (len >= 4) {
        uint32_t w;
        memcpy(&w, p, 4);
        sum = add_carry(sum, w);
        p += 4;
        len -= 4;
    }
    if (len >= 2) {
        uint16_t h;
        memcpy(&h, p, 2);
        sum = add_carry(sum, h);
        p += 2;
        len -= 2;
    }
    if (len > 0)
        sum = add_carry(sum, *p);
    sum = (sum & 0xffffffffu) + (sum >> 32); /* 64 -> 33 bits */
    sum = (sum & 0xffffffffu) + (sum >> 32); /* -> 32 */
    sum = (sum & 0xffffu) + (sum >> 16);     /* -> 17 */
    sum = (sum & 0xffffu) + (sum >> 16);     /* -> 16 */
    return (u16_t)sum;
}
