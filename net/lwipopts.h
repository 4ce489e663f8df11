/*
 * lwipopts.h: nom's lwIP 2.1.3 configuration, tuned for one application's private stack
 * (paper section 3.6: the stack is linked into the application and driven by its scheduler).
 *
 * Mode: NO_SYS=1. The stack runs on the raw/tcp callback API inside nom_preempt_disable(),
 * called from the application's own threads (socket calls) and from libnom's idle hook
 * (received batches, timers). We do not use NO_SYS=0 with lwIP's sockets because (1) every
 * lwIP socket call would post to the tcpip thread's mailbox and wait for it: a thread switch
 * per call on the data path, which is what an exokernel stack exists to avoid; and (2) lwIP's
 * select/poll only knows lwIP sockets, while memcached/libevent need one poll() over sockets
 * and pipes, which libnom's single fd table gives us (net/sock_*.c are our socket layer).
 *
 * Every choice below says why. Sizes assume a 128 MiB VM and "many thousands" of concurrent
 * connections for nhttpd (issue 4), and one NIC per application.
 */
#ifndef NOM_LWIPOPTS_H
#define NOM_LWIPOPTS_H

/* ---- Mode ---------------------------------------------------------------------------- */
#define NO_SYS                      1  /* see above: no tcpip thread, no mailboxes */
#define LWIP_TIMERS                 1  /* sys_check_timeouts() runs from our idle hook/timer */
#define SYS_LIGHTWEIGHT_PROT        0  /* no interrupt context touches lwIP: the driver's IRQ
                                          upcall only wakes the scheduler; everything else runs
                                          with preemption disabled (net/netloop.c) */
#define LWIP_SOCKET                 0  /* our own socket layer (net/sock_*.c) */
#define LWIP_NETCONN                0
#define LWIP_RAW                    0  /* no raw sockets offered; ICMP echo is answered by core */
#define LWIP_CALLBACK_API           1

/* ---- Protocols ----------------------------------------------------------------------- */
#define LWIP_IPV4                   1
#define LWIP_IPV6                   0  /* QEMU user networking and the experiment are IPv4 */
#define LWIP_ARP                    1
#define LWIP_ETHERNET               1
#define LWIP_ICMP                   1  /* the namespace test pings the guest */
#define LWIP_UDP                    1
#define LWIP_TCP                    1
#define LWIP_DHCP                   1  /* default addressing (nom_net_start) */
#define DHCP_DOES_ARP_CHECK         0  /* saves ~1 s per boot; QEMU's DHCP server is alone */
#define LWIP_IGMP                   0
#define LWIP_DNS                    0  /* getaddrinfo is numeric only (issue 4) */
#define LWIP_AUTOIP                 0
#define IP_REASSEMBLY               1  /* NetPIPE/UDP tests may send >MTU datagrams */
#define IP_FRAG                     1
#define ARP_TABLE_SIZE              32 /* a few peers on a LAN; 10 is tight for load tests */
#define ARP_QUEUEING                1  /* keep the first packets while ARP resolves */
/* Packets kept per address while it resolves (lwIP's default: 3, the oldest dropped beyond).
 * Through QEMU's user networking every client is behind the gateway, whose address nobody
 * tells us until we ask: a burst of 4 connections on a fresh boot (memcslap --concurrency=4)
 * left one SYN-ACK dropped, and that connection waited 3 s for the user-mode TCP's second SYN
 * in 4 of 6 boots (results/first-connections-2026-11-29-arp-queue). A listen backlog's worth,
 * within MEMP_NUM_ARP_QUEUE for all addresses together. net_api.c also asks for the gateway
 * as soon as the address is known. */
#define ARP_QUEUE_LEN               64
#define ETHARP_SUPPORT_STATIC_ENTRIES 0

/* ---- Memory ---------------------------------------------------------------------------- */
#define MEM_ALIGNMENT               8  /* x86-64: pbuf payloads start 8-aligned for memcpy */
/* lwIP's heap is ours: free lists of size classes over one static arena of MEM_SIZE bytes
 * (lwip_heap.c: a block off a list instead of lwIP's first-fit walk and merge, 131 -> 51
 * instructions per segment sent and freed; what the classes cost in memory is said there).
 * MEM_LIBC_MALLOC only makes lwIP call these names instead of its own heap; no libc malloc. */
#define MEM_LIBC_MALLOC             1
#define mem_clib_malloc             nomnet_heap_malloc
#define mem_clib_calloc             nomnet_heap_calloc
#define mem_clib_free               nomnet_heap_free
#include "lwip_heap.h"
/* The heap holds PBUF_RAM pbufs: every TCP segment we send (tcp_write copies the
 * application's bytes once into the segment, which stays queued until acknowledged; the driver
 * then copies the frame once more into its own DMA buffer, its contract) and every UDP
 * datagram. 16 MiB covers ~128 connections with a full 128 KiB send buffer, and tens of
 * thousands of small responses in flight; it is address space, opened as it is cut. */
#define MEM_SIZE                    (16 * 1024 * 1024)
/* Fixed pools: O(1) allocation of pcbs and segments, with the bounds below. net/lwip_memp.c
 * builds them in place of lwIP's memp.c, each pool's memory opened as its elements are first
 * used (the bounds are address space until then, not .bss the kernel zeroes at every boot). */
#define MEMP_MEM_MALLOC             0
#define MEMP_OVERFLOW_CHECK         0
#define MEMP_SANITY_CHECK           0
/* nhttpd must hold "many thousands of concurrent connections" (issue 4). A tcp_pcb is
 * ~200 bytes, so 8192 of them cost 1.6 MiB. */
#define MEMP_NUM_TCP_PCB            8192
#define MEMP_NUM_TCP_PCB_LISTEN     32
#define MEMP_NUM_UDP_PCB            32
/* Segments queued for sending or received out of order, over all connections. */
#define MEMP_NUM_TCP_SEG            16384
#define MEMP_NUM_REASSDATA          8
#define IP_REASS_MAX_PBUFS          64  /* a 64 KiB UDP datagram is 45 fragments */
#define MEMP_NUM_FRAG_PBUF          32
#define MEMP_NUM_ARP_QUEUE          256 /* four addresses' ARP_QUEUE_LEN (above) */
#define MEMP_NUM_PBUF               256 /* PBUF_REF/ROM: fragments and custom pbufs only */
/* lwIP's own timeouts and link_cache.c's expiry (its header cache lives one ARP timer period). */
#define MEMP_NUM_SYS_TIMEOUT        (LWIP_NUM_SYS_TIMEOUT_INTERNAL + 1)
/* Receive pool: the netif copies a received frame once into a pool pbuf when it cannot lend
 * the driver's buffer (zero-copy receive, netif_virtio.c: short frames, or the driver's spare
 * buffers all lent). 4096 x ~1.6 KiB = 6.5 MiB: 30 full receive windows. */
#define PBUF_POOL_SIZE              4096
#define PBUF_POOL_BUFSIZE           LWIP_MEM_ALIGN_SIZE(1514 + 2)  /* one frame per pbuf */
#define LWIP_SUPPORT_CUSTOM_PBUF    1  /* zero-copy receive: pbufs over ring buffers (netif_virtio.c) */
/* Room before every pbuf's Ethernet header for the virtio-net header (12 bytes, VERSION_1):
 * the driver writes it there and the device reads header and frame from the pbuf itself
 * (zero-copy transmit, netif_virtio.c). */
#define PBUF_LINK_ENCAPSULATION_HLEN 12
#define LWIP_NETIF_TX_SINGLE_PBUF   1  /* TCP builds each segment, headers included, in one
                                          PBUF_RAM: every frame reaches the driver as one
                                          piece, so it copies it with one memcpy */

/* ---- TCP tuning ---------------------------------------------------------------------- */
#define TCP_MSS                     1460 /* Ethernet MTU 1500 minus 40 bytes of headers */
/* Window scaling lets the receive window exceed 64 KiB: NetPIPE's streaming test and large
 * HTTP bodies are bandwidth x delay bound, and the VM's round trip under TCG is long. */
#define LWIP_WND_SCALE              1
#define TCP_RCV_SCALE               2
#define TCP_WND                     (88 * TCP_MSS)      /* 128 KiB */
#define TCP_SND_BUF                 (88 * TCP_MSS)      /* 128 KiB: keeps a 128 KiB window full */
#define TCP_SND_QUEUELEN            (2 * TCP_SND_BUF / TCP_MSS + 8)
#define TCP_SNDLOWAT                (TCP_SND_BUF / 4)   /* POLLOUT once a quarter is free */
#define TCP_SNDQUEUELOWAT           (TCP_SND_QUEUELEN / 4)
#define TCP_OVERSIZE                TCP_MSS             /* small writes grow one segment
                                                           instead of chaining pbufs */
#define TCP_QUEUE_OOSEQ             1   /* keep out-of-order segments: no go-back-N on loss */
#define TCP_OOSEQ_MAX_PBUFS         64  /* ... but bounded per connection */
#define LWIP_TCP_SACK_OUT           1   /* tell the peer what we hold out of order */
/* No lwIP backlog: its counter is a u8 that counts half-open connections, so a burst of SYNs
 * (4,000 clients connecting at once) was cut to 255 handshakes in flight and the rest fell
 * into synchronised SYN retransmission back-off (1, 3, 7 ... 63 s), which TCG guests did not
 * always clear before the clients gave up. listen(backlog) is enforced by the socket layer
 * instead, on the established connections waiting for accept() as Linux does: the IPv4 input
 * hook drops a SYN for a listener whose accept queue is full (tcp_hooks.c). Half-open
 * connections are bounded by MEMP_NUM_TCP_PCB, and lwIP's tcp_alloc() then recycles the
 * oldest TIME-WAIT, LAST-ACK and CLOSING pcbs first. */
#define TCP_LISTEN_BACKLOG          0
#define LWIP_TCP_TIMESTAMPS         0   /* 12 bytes per segment for RTTM we do not need */
#define TCP_MAXRTX                  12
#define TCP_SYNMAXRTX               6
#define LWIP_TCP_KEEPALIVE          1   /* SO_KEEPALIVE, TCP_KEEPIDLE/INTVL/CNT */
#define SO_REUSE                    1   /* SO_REUSEADDR: servers restart on their port */
#define TCP_TTL                     64

/* ---- Checksums ---------------------------------------------------------------------------
 * Compiled in both ways, switched per netif (LWIP_CHECKSUM_CTRL_PER_NETIF): where the device
 * offloads them (virtio-net CSUM/GUEST_CSUM, drivers/virtio-net/virtio_net.h) netif_virtio.c
 * turns lwIP's TCP/UDP sums off on transmit, and on receive for each frame the device vouches
 * for; IP and ICMP sums stay lwIP's (virtio offloads neither). lwIP's checksum was 10 % of a
 * NetPIPE 1 KiB message's guest instructions (issue 16). The sum itself is chksum.c's
 * (LWIP_CHKSUM, arch/cc.h), eight bytes a step. */
#define LWIP_CHECKSUM_CTRL_PER_NETIF 1
#define CHECKSUM_GEN_IP             1
#define CHECKSUM_GEN_UDP            1
#define CHECKSUM_GEN_TCP            1
#define CHECKSUM_GEN_ICMP           1
#define CHECKSUM_CHECK_IP           1
#define CHECKSUM_CHECK_UDP          1
#define CHECKSUM_CHECK_TCP          1
#define CHECKSUM_CHECK_ICMP         1
#define LWIP_CHECKSUM_ON_COPY       0  /* tcp_write copies with memcpy, which is faster here */

/* ---- Netif ----------------------------------------------------------------------------- */
#define LWIP_SINGLE_NETIF           0  /* host tests wire two NICs; cheap either way */
#define LWIP_NETIF_STATUS_CALLBACK  1  /* nom_net_start learns when DHCP bound */
#define LWIP_NETIF_LINK_CALLBACK    0
#define LWIP_NETIF_LOOPBACK         0
#define LWIP_HAVE_LOOPIF            0
#define LWIP_NETIF_HOSTNAME         0

/* ---- Hooks (lwip_hooks.h, tcp_hooks.c): RFC 6528 sequence numbers, TIME-WAIT reuse ---- */
#define LWIP_HOOK_FILENAME          "lwip_hooks.h"
#define LWIP_HOOK_TCP_ISN(lip, lport, rip, rport) nomnet_tcp_isn((lip), (lport), (rip), (rport))
#define LWIP_HOOK_IP4_INPUT(p, inp) nomnet_ip4_input((p), (inp))
/* tcp_ack_batch.c; its test inline (a listener's pcb has a state but no flags, so state
 * first): the call is for a connection with a delayed ACK pending, not for every segment. */
#define LWIP_HOOK_TCP_INPACKET_PCB(pcb, hdr, optlen, opt1len, opt2, p) \
    ((pcb)->state == ESTABLISHED && ((pcb)->flags & TF_ACK_DELAY) \
     ? (err_t)nomnet_tcp_inpacket((pcb), (hdr), (p)) : ERR_OK)

/* ---- Byte order, statistics, debugging ------------------------------------------------- */
#define LWIP_DONT_PROVIDE_BYTEORDER_FUNCTIONS 1 /* htons etc. come from libnom's headers */
/* Statistics: only the pools' use, which rx_budget.c reads to keep the receive pool from
 * emptying; our own counters (nom/net.h) are cheaper for the rest. */
#define LWIP_STATS                  1
#define MEMP_STATS                  1
#define LINK_STATS                  0
#define ETHARP_STATS                0
#define IP_STATS                    0
#define IPFRAG_STATS                0
#define ICMP_STATS                  0
#define UDP_STATS                   0
#define TCP_STATS                   0
#define MEM_STATS                   0
#define SYS_STATS                   0
#define LWIP_STATS_DISPLAY          0
/* LWIP_DEBUG stays undefined (lwIP tests #ifdef): no debug output on the data path. */

#endif
