/*
 * rawecho's answers to ARP, ICMP echo and UDP, built directly on Ethernet frames (contract in
 * proto.h). Field offsets are those of RFC 826 (ARP), RFC 791 (IPv4), RFC 792 (ICMP) and
 * RFC 768 (UDP); multi-byte fields are big-endian on the wire.
 */
#include <string.h>

#include "proto.h"

#define ETH_HLEN 14
#define ETH_MIN 60 /* shortest Ethernet frame without FCS; shorter answers are padded */
#define ETHERTYPE_IPV4 0x0800
#define ETHERTYPE_ARP 0x0806
#define ARP_LEN 28
#define IP_PROTO_ICMP 1
#define IP_PROTO_UDP 17
#define UDP_HLEN 8

static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }

static const uint8_t broadcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

/* One's-complement sum of RFC 1071, not yet folded or inverted. */
static uint32_t sum16(const uint8_t *p, size_t n, uint32_t sum)
{
    for (; n > 1; p += 2, n -= 2)
        sum += get16(p);
    if (n)
        sum += (uint32_t)p[0] << 8;
    return sum;
}

static uint16_t fold(uint32_t sum)
{
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)~sum;
}

/* Ethernet header of an answer: back to the sender, from us. */
static void eth_answer(const uint8_t *in, uint8_t *out)
{
    memcpy(out, in + 6, 6);
    memcpy(out + 6, in, 6);
    memcpy(out + 12, in + 12, 2);
}

static size_t pad(uint8_t *out, size_t n)
{
    if (n < ETH_MIN) {
        memset(out + n, 0, ETH_MIN - n);
        n = ETH_MIN;
    }
    return n;
}

size_t proto_arp_reply(const struct proto_addr *me, const uint8_t *in, size_t len, uint8_t *out)
{
    const uint8_t *arp = in + ETH_HLEN;
    if (len < ETH_HLEN + ARP_LEN || get16(in + 12) != ETHERTYPE_ARP
        || (memcmp(in, me->mac, 6) && memcmp(in, broadcast, 6)))
        return 0;
    /* Ethernet/IPv4 request (htype 1, ptype 0x0800, hlen 6, plen 4, op 1) for our IP. */
    static const uint8_t want[8] = { 0, 1, 8, 0, 6, 4, 0, 1 };
    if (memcmp(arp, want, 8) || memcmp(arp + 24, me->ip, 4))
        return 0;
    memcpy(out, in + 6, 6);
    memcpy(out + 6, me->mac, 6);
    put16(out + 12, ETHERTYPE_ARP);
    uint8_t *r = out + ETH_HLEN;
    memcpy(r, want, 8);
    put16(r + 6, 2);                 /* reply */
    memcpy(r + 8, me->mac, 6);       /* sender: us */
    memcpy(r + 14, me->ip, 4);
    memcpy(r + 18, arp + 8, 10);     /* target: who asked */
    return pad(out, ETH_HLEN + ARP_LEN);
}

/* The IPv4 header of `in` if it is a whole, unfragmented datagram of protocol `proto` to our
 * MAC and IP; NULL otherwise. *ihl and *total get its header and total lengths. */
static const uint8_t *ipv4_for_us(const struct proto_addr *me, const uint8_t *in, size_t len,
                                  uint8_t proto, size_t *ihl, size_t *total)
{
    if (len < ETH_HLEN + 20 || get16(in + 12) != ETHERTYPE_IPV4 || memcmp(in, me->mac, 6))
        return NULL;
    const uint8_t *ip = in + ETH_HLEN;
    *ihl = (size_t)(ip[0] & 0x0f) * 4;
    *total = get16(ip + 2);
    if ((ip[0] >> 4) != 4 || *ihl < 20 || *total < *ihl || *total > len - ETH_HLEN
        || (get16(ip + 6) & 0x3fff) /* MF or a fragment offset */
        || ip[9] != proto || memcmp(ip + 16, me->ip, 4))
        return NULL;
    return ip;
}

/* Swaps source and destination addresses, sets TTL 64 and recomputes the header checksum. */
static void ip_answer_header(const uint8_t *ip, size_t ihl, uint8_t *r)
{
    memcpy(r, ip, ihl);
    memcpy(r + 12, ip + 16, 4);
    memcpy(r + 16, ip + 12, 4);
    r[8] = 64;
    put16(r + 10, 0);
    put16(r + 10, fold(sum16(r, ihl, 0)));
}

size_t proto_icmp_reply(const struct proto_addr *me, const uint8_t *in, size_t len, uint8_t *out)
{
    size_t ihl, total;
    const uint8_t *ip = ipv4_for_us(me, in, len, IP_PROTO_ICMP, &ihl, &total);
    if (!ip || total < ihl + 8 || ip[ihl] != 8 /* echo request */ || ip[ihl + 1] != 0)
        return 0;
    eth_answer(in, out);
    uint8_t *r = out + ETH_HLEN;
    ip_answer_header(ip, ihl, r);
    memcpy(r + ihl, ip + ihl, total - ihl);
    r[ihl] = 0; /* echo reply */
    put16(r + ihl + 2, 0);
    put16(r + ihl + 2, fold(sum16(r + ihl, total - ihl, 0)));
    return pad(out, ETH_HLEN + total);
}

int proto_udp_view(const struct proto_addr *me, const uint8_t *in, size_t len,
                   struct proto_udp *udp)
{
    size_t ihl, total;
    const uint8_t *ip = ipv4_for_us(me, in, len, IP_PROTO_UDP, &ihl, &total);
    if (!ip || total < ihl + UDP_HLEN)
        return 0;
    const uint8_t *u = ip + ihl;
    size_t ulen = get16(u + 4);
    if (ulen < UDP_HLEN || ulen > total - ihl)
        return 0;
    *udp = (struct proto_udp){ .dst_port = get16(u + 2), .payload = u + UDP_HLEN,
                               .payload_len = ulen - UDP_HLEN };
    return 1;
}

size_t proto_udp_echo(const uint8_t *in, size_t len, uint8_t *out)
{
    const uint8_t *ip = in + ETH_HLEN;
    size_t ihl = (size_t)(ip[0] & 0x0f) * 4, total = get16(ip + 2);
    if (ETH_HLEN + total > len || ETH_HLEN + total > PROTO_FRAME_MAX)
        return 0;
    eth_answer(in, out);
    memcpy(out + ETH_HLEN, ip, total);
    memcpy(out + ETH_HLEN + 12, ip + 16, 4);
    memcpy(out + ETH_HLEN + 16, ip + 12, 4);
    uint8_t *u = out + ETH_HLEN + ihl;
    memcpy(u, ip + ihl + 2, 2);
    memcpy(u + 2, ip + ihl, 2);
    return pad(out, ETH_HLEN + total);
}

/* UDP checksum over the pseudo-header (RFC 768); 0 is sent as 0xffff. */
static uint16_t udp_checksum(const uint8_t *ip, const uint8_t *u, size_t ulen)
{
    uint32_t sum = sum16(ip + 12, 8, IP_PROTO_UDP + (uint32_t)ulen);
    uint16_t c = fold(sum16(u, ulen, sum));
    return c ? c : 0xffff;
}

size_t proto_udp_reply(const uint8_t *in, const void *payload, size_t plen, uint8_t *out)
{
    const uint8_t *ip = in + ETH_HLEN;
    size_t ihl = (size_t)(ip[0] & 0x0f) * 4;
    if (plen > PROTO_FRAME_MAX - ETH_HLEN - 20 - UDP_HLEN)
        plen = PROTO_FRAME_MAX - ETH_HLEN - 20 - UDP_HLEN;
    eth_answer(in, out);
    uint8_t *r = out + ETH_HLEN;
    static const uint8_t hdr[12] = { 0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, IP_PROTO_UDP, 0, 0 };
    memcpy(r, hdr, sizeof hdr);
    put16(r + 2, (uint16_t)(20 + UDP_HLEN + plen));
    memcpy(r + 12, ip + 16, 4);
    memcpy(r + 16, ip + 12, 4);
    put16(r + 10, fold(sum16(r, 20, 0)));
    uint8_t *u = r + 20;
    memcpy(u, ip + ihl + 2, 2);
    memcpy(u + 2, ip + ihl, 2);
    put16(u + 4, (uint16_t)(UDP_HLEN + plen));
    put16(u + 6, 0);
    memcpy(u + UDP_HLEN, payload, plen);
    put16(u + 6, udp_checksum(r, u, UDP_HLEN + plen));
    return pad(out, ETH_HLEN + 20 + UDP_HLEN + plen);
}
