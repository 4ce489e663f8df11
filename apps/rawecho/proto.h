/*
 * rawecho's protocol answers, straight on Ethernet frames, no stack: ARP (RFC 826) for our
 * address, ICMP echo (RFC 792, so ping works), and UDP (RFC 768) replies, the echo of port 7
 * (RFC 862) among them. Pure functions over byte buffers, so they run in host tests too.
 *
 * Contract: every function reads only the `len` bytes of `in`, accepts any garbage (a frame
 * that is truncated, not IPv4, fragmented, with IP options, not for our MAC/IP, or with
 * inconsistent lengths gets no answer, returned as 0), and writes the answer into `out`
 * (PROTO_FRAME_MAX bytes, which must not overlap `in`), returning its length.
 */
#ifndef RAWECHO_PROTO_H
#define RAWECHO_PROTO_H

#include <stddef.h>
#include <stdint.h>

#define PROTO_FRAME_MAX 1518u /* VNET_MTU_FRAME: the largest frame the driver hands up */

struct proto_addr {
    uint8_t mac[6];
    uint8_t ip[4];
};

/* A UDP datagram addressed to us, as found by proto_udp_view(). */
struct proto_udp {
    uint16_t dst_port;
    const uint8_t *payload;
    size_t payload_len;
};

/* An ARP reply if `in` asks who has our IP; else 0. */
size_t proto_arp_reply(const struct proto_addr *me, const uint8_t *in, size_t len, uint8_t *out);

/* An ICMP echo reply if `in` is an echo request to our IP; else 0. */
size_t proto_icmp_reply(const struct proto_addr *me, const uint8_t *in, size_t len, uint8_t *out);

/* 1 and *udp filled if `in` is a well-formed unfragmented UDP/IPv4 datagram to our MAC and IP;
 * else 0. */
int proto_udp_view(const struct proto_addr *me, const uint8_t *in, size_t len,
                   struct proto_udp *udp);

/* The echo of the UDP datagram in `in` (checked by proto_udp_view): addresses and ports swapped,
 * which leaves both checksums valid (one's-complement sums do not depend on order). */
size_t proto_udp_echo(const uint8_t *in, size_t len, uint8_t *out);

/* A reply to the UDP datagram in `in` carrying `payload` (at most PROTO_FRAME_MAX - 42 bytes,
 * longer is cut), checksums computed. */
size_t proto_udp_reply(const uint8_t *in, const void *payload, size_t plen, uint8_t *out);

#endif /* RAWECHO_PROTO_H */
