/*
 * tcp_ack_batch.c: one ACK per receive batch for a stream, where lwIP sends one every second
 * segment (issue 16).
 *
 * lwIP acknowledges in-order data the classic way (RFC 1122 4.2.3.2, its tcp_ack macro): the
 * first unacknowledged segment sets a delayed ACK, the second sends an ACK at once, from inside
 * tcp_input. A stream received in batches (W > 0, or frames that pile up in the ring while the
 * core works) thus sent an ACK for every other segment of a batch, each already overtaken by
 * the next before the batch ended: 12.4 ACKs per 32 KiB NetPIPE message, each about 500
 * instructions of the stack's plus the driver's transmit path (results/stack-count-*T1539Z*).
 *
 * Here the ACK that the second segment would send waits until the batch has been through the
 * stack, then one ACK covers every segment of the batch: a stretch ACK, as Linux sends after
 * GRO merged a batch of segments (RFC 5681 4.2 allows them; the sender counts acknowledged
 * bytes, not ACKs: Linux's appropriate byte counting, RFC 3465). The ACK leaves when the batch
 * has been handed to the stack, in the same netloop pass, so no ACK is later than the end of
 * the batch holding its second segment; W already decided how long the batch waited.
 *
 * How, without editing lwIP: its hook before a segment is processed (LWIP_HOOK_TCP_INPACKET_PCB)
 * takes the pending delayed ACK back for a segment that lwIP will accept in order (an
 * established connection, the next sequence number, payload within the window), so lwIP's
 * tcp_ack sets a delayed ACK again instead of sending one, and marks the connection (a flag bit
 * lwIP does not use). nomnet_tcp_ack_batch_end() then sends the ACK of every marked connection
 * that still has one pending; a connection that sent a segment meanwhile (its data carried
 * the ACK: lwIP clears the delayed ACK when it sends) has none. Everything else lwIP acknowledges
 * at once stays as it was: out-of-order segments (the duplicate ACKs fast retransmit needs),
 * FINs, window probes, and window updates after a read. A request answered in the same pass
 * (one segment: never marked) still carries its ACK on the answer.
 */
#include <stdbool.h>

#include "lwip/priv/tcp_priv.h"
#include "lwip/tcp.h"

#include "lwip_hooks.h"

/* lwIP 2.1.3's TF_ flags end at TF_SACK (0x1000); tcpflags_t is 16 bits with LWIP_WND_SCALE.
 * OWED: the connection's ACK waits for the batch's end. ODD: of the hook's calls on it since,
 * an odd number so far (see acks_batched). */
#define TF_NOM_ACK_OWED 0x8000U
#define TF_NOM_ACK_ODD 0x4000U
_Static_assert(sizeof(tcpflags_t) >= 2, "TF_NOM_ACK_OWED needs 16-bit TCP flags");

static bool any_owed;         /* a connection was marked since the last batch end */
static uint64_t acks_batched; /* ACKs lwIP would have sent that a batch end did not */

/* Every call that gets past the filter is one segment arriving with a delayed ACK pending.
 * Alone, lwIP sends an ACK at every second in-order segment: at the first, third, fifth...
 * such call of a batch (each ACK clears the pending one, the next segment sets it again).
 * Here every segment leaves a delayed ACK pending, so the calls come at every segment, and
 * the batch's end sends the first of those ACKs: the third, fifth... calls are the ones saved. */
int nomnet_tcp_inpacket(struct tcp_pcb *pcb, const struct tcp_hdr *hdr, const struct pbuf *p)
{
    /* Listening and TIME-WAIT pcbs come here too: the state first (a listener has no flags).
     * lwIP has taken the header off p and turned its fields to host order. */
    if (pcb->state != ESTABLISHED || p->tot_len == 0 || !(pcb->flags & TF_ACK_DELAY)
        || (TCPH_FLAGS(hdr) & (TCP_SYN | TCP_FIN | TCP_RST)) || pcb->refused_data != NULL
        || hdr->seqno != pcb->rcv_nxt || p->tot_len > pcb->rcv_wnd)
        return ERR_OK;
    tcp_clear_flags(pcb, TF_ACK_DELAY); /* lwIP's tcp_ack delays again instead of sending */
    if (!(pcb->flags & TF_NOM_ACK_OWED)) {
        tcp_set_flags(pcb, TF_NOM_ACK_OWED | TF_NOM_ACK_ODD);
        any_owed = true;
    } else if (pcb->flags & TF_NOM_ACK_ODD) {
        tcp_clear_flags(pcb, TF_NOM_ACK_ODD);
    } else {
        tcp_set_flags(pcb, TF_NOM_ACK_ODD);
        acks_batched++;
    }
    return ERR_OK;
}

void nomnet_tcp_ack_batch_end(void)
{
    if (!any_owed)
        return;
    any_owed = false;
    /* Marked pcbs are active ones; one that went away meanwhile (a reset) is simply not found. */
    for (struct tcp_pcb *pcb = tcp_active_pcbs; pcb != NULL; pcb = pcb->next) {
        if (!(pcb->flags & TF_NOM_ACK_OWED))
            continue;
        tcp_clear_flags(pcb, TF_NOM_ACK_OWED | TF_NOM_ACK_ODD);
        if (pcb->flags & TF_ACK_DELAY) { /* still owed: nothing has carried it since */
            tcp_ack_now(pcb);
            tcp_output(pcb);
        }
    }
}

uint64_t nomnet_tcp_acks_batched(void)
{
    return acks_batched;
}
