/*
 * sock_tcp.c: TCP sockets on lwIP's raw tcp API (sock.h). lwIP calls the callbacks below from
 * inside the stack (netloop_run, or a socket call's tcp_output); they only move state into the
 * socket and report readiness. Received data stays in lwIP's pbufs until read, and the window
 * opens (tcp_recved) only as the application reads: a slow reader slows its sender, as TCP
 * intends, without buffering anything twice.
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>

#include <nom/time.h>

#include "lwip/priv/tcp_priv.h"
#include "rx_budget.h"
#include "sock.h"

/* lwIP's u16_t arguments (tcp_write, tcp_recved) take at most this at a time. */
#define TCP_CHUNK_MAX 0xffffu

/* Bytes read are given back to the window (tcp_recved) once this many have gathered, not at
 * every read: about 60 instructions per call, per message of a ping-pong (issue 16). Half of
 * lwIP's TCP_WND_UPDATE_THRESHOLD (5,840 bytes here): a window grown by the threshold at once
 * makes lwIP send a window update of its own, an extra segment (tried: +115 instructions per
 * NetPIPE message), while a smaller growth rides on the next segment we send anyway. What
 * waits is at most 2,920 bytes of the 128 KiB window our segments advertise; a peer blocked
 * by a full window is released by the read that empties it (TCP_WND bytes, far above this). */
#define TCP_OPEN_WINDOW_BATCH (TCP_WND_UPDATE_THRESHOLD / 2)

/* ---- Residence: how long served requests spend in the server ----
 *
 * The online learner (libnom/src/profit/online.c) needs the spread of request latency for the
 * penalty's SLO term, and the server cannot see its clients' clocks. What it can see: on an
 * accepted connection a request starts when its first segment reaches the socket while no
 * request is open (request_tsc), and ends when the application hands over its whole answer
 * (a send without MSG_MORE that queued everything). Left out: the time the request waited in
 * the device before the driver took it (W and the ring), the network and the client. A
 * request whose answer comes in several sends ends at the first; bytes still unread at that
 * moment open the next request then (pipelining: a lower bound of its wait). Costs one TSC
 * read per request at each end and three additions. */
static struct {
    uint64_t requests;
    double ticks_sum, ticks_sq_sum; /* TSC ticks: made microseconds only when read */
} residence;

void tcpsock_residence(struct nomsock_residence *out)
{
    double us_per_tick = 1e6 / (double)nom_tsc_hz();
    *out = (struct nomsock_residence){
        .requests = residence.requests,
        .us_sum = residence.ticks_sum * us_per_tick,
        .us_sq_sum = residence.ticks_sq_sum * us_per_tick * us_per_tick,
    };
}

static void request_arrived(struct nomsock *s)
{
    if (s->accepted && s->request_tsc == 0)
        s->request_tsc = nom_tsc();
}

static void request_answered(struct nomsock *s)
{
    if (s->request_tsc == 0)
        return;
    uint64_t now = nom_tsc();
    double ticks = (double)(now - s->request_tsc);
    residence.requests++;
    residence.ticks_sum += ticks;
    residence.ticks_sq_sum += ticks * ticks;
    s->request_tsc = s->rx_bytes > 0 ? now : 0;
}

/* ---- callbacks (lwIP context, stack lock held) ---- */

/* lwIP freed the pcb (RST received, retransmissions exhausted, or an abort). */
static void tcpsock_on_err(void *arg, err_t err)
{
    struct nomsock *s = arg;
    if (s == NULL)
        return;
    if (s->state == NS_CONNECTING)
        s->error = err == ERR_RST ? ECONNREFUSED : ETIMEDOUT;
    else
        s->error = err == ERR_RST ? ECONNRESET : (err == ERR_ABRT ? ETIMEDOUT : ECONNABORTED);
    s->state = NS_DEAD;
    s->pcb.tcp = NULL;
    nomsock_changed(s);
}

static err_t tcpsock_on_recv(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err)
{
    struct nomsock *s = arg;
    int eof = p == NULL;
    (void)pcb;
    (void)err; /* always ERR_OK in lwIP 2.1 */
    if (eof) {
        s->rd_eof = 1;
    } else if (s->rd_shut) {
        tcp_recved(pcb, p->tot_len); /* shutdown(SHUT_RD): discard, keep the window open */
        pbuf_free(p);
        return ERR_OK;
    } else {
        /* Small segments always (a 1.5 KiB pool buffer for a few bytes), everything under
         * pressure: unread data must not starve the ring of the frames every socket needs
         * (rx_budget.h). */
        p = nomnet_rx_unpool(p, p->tot_len <= NOMSOCK_RX_COPY_MAX);
        /* Keep the chain's pbufs as a list of our own; tot_len is not maintained across it. */
        if (s->rx_tail != NULL)
            s->rx_tail->next = p;
        else
            s->rx_head = p;
        s->rx_bytes += p->tot_len;
        for (s->rx_tail = p; s->rx_tail->next != NULL; s->rx_tail = s->rx_tail->next)
            ;
        request_arrived(s);
        /* saturating: a peer that only sends stays "many" (adapt_stack.c caps it anyway) */
        if (__builtin_add_overflow(s->rx_unanswered, p->tot_len, &s->rx_unanswered))
            s->rx_unanswered = UINT32_MAX;
    }
    /* Data can add only POLLIN: when that was reported already (and not lost to a read since,
     * tcpsock_recv_nb) there is nothing to ask, as in the sent callback below. The end of the
     * stream may add POLLHUP too. */
    if (eof || !(s->notified & POLLIN))
        nomsock_changed(s);
    return ERR_OK;
}

/* Acknowledged data only frees send buffer, so the one bit it can add is POLLOUT: when that
 * was reported already there is nothing to ask (a request-response peer's every message
 * acknowledges our last answer: one readiness evaluation per request less, issue 16). The
 * report stays true: only a send (tcpsock_send_nb) or shutdown takes writability away, and
 * each forgets the report then. */
static err_t tcpsock_on_sent(void *arg, struct tcp_pcb *pcb, u16_t len)
{
    struct nomsock *s = arg;
    (void)pcb;
    (void)len;
    if (!(s->notified & POLLOUT))
        nomsock_changed(s);
    return ERR_OK;
}

static err_t tcpsock_on_connected(void *arg, struct tcp_pcb *pcb, err_t err)
{
    struct nomsock *s = arg;
    (void)pcb;
    (void)err; /* always ERR_OK: failures come through tcpsock_on_err */
    s->state = NS_CONNECTED;
    nomsock_changed(s);
    return ERR_OK;
}

static void tcpsock_hook(struct nomsock *s, struct tcp_pcb *pcb)
{
    s->pcb.tcp = pcb;
    tcp_arg(pcb, s);
    tcp_recv(pcb, tcpsock_on_recv);
    tcp_sent(pcb, tcpsock_on_sent);
    tcp_err(pcb, tcpsock_on_err);
}

/* A connection completed the handshake on a listener: it becomes a socket now, so data that
 * arrives before accept() is kept, and waits in the listener's queue (NOMSOCK_ACCEPT_QUEUE). */
static err_t tcpsock_on_accept(void *arg, struct tcp_pcb *newpcb, err_t err)
{
    struct nomsock *l = arg, *c;
    if (err != ERR_OK || newpcb == NULL)
        return ERR_VAL;
    c = nomsock_alloc(SOCK_STREAM);
    if (c == NULL)
        return ERR_MEM; /* lwIP aborts the connection */
    c->state = NS_CONNECTED;
    c->nodelay = l->nodelay;
    c->keepalive = l->keepalive;
    c->sndbuf = l->sndbuf;
    c->rcvbuf = l->rcvbuf;
    ip_addr_copy(c->peer_ip, newpcb->remote_ip);
    c->peer_port = newpcb->remote_port;
    tcpsock_hook(c, newpcb);
    c->accepted = 1;
    tcpsock_apply_options(c);
    l->accept_len++; /* may pass accept_max by the handshakes that were under way */
    if (l->accept_tail != NULL)
        l->accept_tail->accept_next = c;
    else
        l->accept_head = c;
    l->accept_tail = c;
    nomsock_changed(l);
    return ERR_OK;
}

/* ---- operations (stack lock held, never block) ---- */

int tcpsock_open(struct nomsock *s)
{
    struct tcp_pcb *pcb = tcp_new_ip_type(IPADDR_TYPE_V4);
    if (pcb == NULL)
        return -ENOBUFS;
    tcpsock_hook(s, pcb);
    return 0;
}

/* Options that live in the pcb (set again on accepted pcbs, which lwIP creates fresh). */
void tcpsock_apply_options(struct nomsock *s)
{
    if (s->pcb.tcp == NULL || s->state == NS_LISTEN)
        return;
    if (s->nodelay)
        tcp_nagle_disable(s->pcb.tcp);
    else
        tcp_nagle_enable(s->pcb.tcp);
    if (s->keepalive)
        ip_set_option(s->pcb.tcp, SOF_KEEPALIVE);
    else
        ip_reset_option(s->pcb.tcp, SOF_KEEPALIVE);
}

int tcpsock_bind_nb(struct nomsock *s, const ip_addr_t *ip, u16_t port)
{
    if (s->state != NS_OPEN || s->pcb.tcp == NULL)
        return -EINVAL;
    if (s->pcb.tcp->local_port != 0)
        return -EINVAL; /* already bound */
    return -nomsock_err_from_lwip(tcp_bind(s->pcb.tcp, ip, port));
}

/* listen()'s backlog as the accept queue's bound (Linux: at least one, at most somaxconn). */
static unsigned accept_max(int backlog)
{
    if (backlog < 1)
        return 1;
    return backlog > NOMSOCK_ACCEPT_QUEUE ? NOMSOCK_ACCEPT_QUEUE : (unsigned)backlog;
}

int tcpsock_listen_nb(struct nomsock *s, int backlog)
{
    struct tcp_pcb *lpcb;
    err_t err;
    if (s->state == NS_LISTEN) {
        s->accept_max = accept_max(backlog);
        return 0;
    }
    if (s->state != NS_OPEN)
        return -EINVAL;
    if (s->pcb.tcp->local_port == 0 && tcp_bind(s->pcb.tcp, IP4_ADDR_ANY, 0) != ERR_OK)
        return -EADDRINUSE;
    /* lwIP ignores the backlog argument (TCP_LISTEN_BACKLOG is 0): accept_max bounds the queue. */
    lpcb = tcp_listen_with_backlog_and_err(s->pcb.tcp, TCP_DEFAULT_LISTEN_BACKLOG, &err);
    if (lpcb == NULL)
        return -nomsock_err_from_lwip(err);
    /* The old pcb is gone; the listen pcb carries no recv/sent/err callbacks. */
    s->pcb.tcp = lpcb;
    s->state = NS_LISTEN;
    s->accept_max = accept_max(backlog);
    tcp_arg(lpcb, s);
    tcp_accept(lpcb, tcpsock_on_accept);
    return 0;
}

int tcpsock_accept_nb(struct nomsock *s, struct nomsock **child)
{
    struct nomsock *c = s->accept_head;
    if (s->state != NS_LISTEN)
        return -EINVAL;
    if (c == NULL)
        return -EAGAIN;
    s->accept_head = c->accept_next;
    if (s->accept_head == NULL)
        s->accept_tail = NULL;
    s->accept_len--;
    c->accept_next = NULL;
    s->notified = nomsock_readiness(s);
    *child = c;
    return 0;
}

int tcpsock_connect_nb(struct nomsock *s, const ip_addr_t *ip, u16_t port)
{
    err_t err;
    switch (s->state) {
    case NS_CONNECTING: return -EALREADY;
    case NS_CONNECTED:  return -EISCONN;
    case NS_LISTEN:     return -EINVAL;
    case NS_DEAD:       return -(s->error ? s->error : ECONNABORTED);
    case NS_OPEN:       break;
    }
    ip_addr_copy(s->peer_ip, *ip);
    s->peer_port = port;
    err = tcp_connect(s->pcb.tcp, ip, port, tcpsock_on_connected);
    if (err != ERR_OK)
        return err == ERR_RTE ? -ENETUNREACH : -nomsock_err_from_lwip(err);
    s->state = NS_CONNECTING;
    return -EINPROGRESS;
}

/* Whether a writer could make progress now (POLLOUT). lwIP's own low-water marks keep a
 * writer from waking for every acknowledged segment. */
static int tcpsock_writable(struct tcp_pcb *pcb)
{
    return tcp_sndbuf(pcb) > TCP_SNDLOWAT && tcp_sndqueuelen(pcb) < TCP_SNDQUEUELOWAT;
}

/* The error a data call reports on a connection that cannot carry data. */
static ssize_t tcpsock_not_usable(struct nomsock *s, int writing)
{
    int e = s->error;
    if (s->state == NS_DEAD) {
        s->error = 0;
        return e ? -e : (writing ? -EPIPE : 0);
    }
    return (s->state == NS_CONNECTING) ? -EAGAIN : -ENOTCONN;
}

ssize_t tcpsock_send_nb(struct nomsock *s, const void *buf, size_t n, int more)
{
    struct tcp_pcb *pcb = s->pcb.tcp;
    size_t sent = 0;
    if (s->state != NS_CONNECTED)
        return tcpsock_not_usable(s, 1);
    if (s->wr_shut)
        return -EPIPE;
    while (sent < n) {
        size_t chunk = n - sent;
        size_t space = tcp_sndbuf(pcb);
        if (tcp_sndqueuelen(pcb) >= TCP_SND_QUEUELEN - 1)
            space = 0;
        if (chunk > space)
            chunk = space;
        if (chunk > TCP_CHUNK_MAX)
            chunk = TCP_CHUNK_MAX;
        if (chunk == 0)
            break;
        /* COPY: the application may reuse buf at once. MORE: no PSH until the last piece. */
        if (tcp_write(pcb, (const char *)buf + sent, (u16_t)chunk,
                      TCP_WRITE_FLAG_COPY | ((more || sent + chunk < n) ? TCP_WRITE_FLAG_MORE : 0))
            != ERR_OK)
            break; /* out of segments or heap: what was queued is sent, the rest waits */
        sent += chunk;
    }
    if (!more || sent < n)
        tcp_output(pcb);
    if (sent > 0)
        s->rx_unanswered = 0;
    if (!more && sent == n && n > 0)
        request_answered(s);
    /* Sending can lose POLLOUT and gain nothing: forget it if lost, so that the sent callback
     * reports it again (the whole readiness was evaluated here before: issue 16). */
    if (s->state == NS_CONNECTED && !tcpsock_writable(pcb))
        s->notified &= (short)~POLLOUT;
    return sent > 0 || n == 0 ? (ssize_t)sent : -EAGAIN;
}

/* Gives consumed bytes back to the window (tcp_recved takes a u16_t). */
static void tcpsock_open_window(struct tcp_pcb *pcb, size_t n)
{
    while (pcb != NULL && n > 0) {
        u16_t k = (u16_t)(n > TCP_CHUNK_MAX ? TCP_CHUNK_MAX : n);
        tcp_recved(pcb, k);
        n -= k;
    }
}

/* Gives what the application has read and the window has not got back yet (rx_unopened). */
static void tcpsock_open_read(struct nomsock *s)
{
    tcpsock_open_window(s->pcb.tcp, s->rx_unopened);
    s->rx_unopened = 0;
}

/* Copies up to n bytes from the receive queue; consumes them unless peek. */
static size_t tcpsock_copy_out(struct nomsock *s, uint8_t *dst, size_t n, int peek)
{
    struct pbuf *q = s->rx_head;
    size_t done = 0, off = s->rx_off;
    while (q != NULL && done < n) {
        size_t k = q->len - off;
        if (k > n - done)
            k = n - done;
        memcpy(dst + done, (uint8_t *)q->payload + off, k);
        done += k;
        off += k;
        if (off == q->len) {
            struct pbuf *next = q->next;
            if (!peek) {
                q->next = NULL;
                pbuf_free(q);
                s->rx_head = next;
            }
            q = next;
            off = 0;
        }
    }
    if (!peek) {
        s->rx_off = (u16_t)off;
        if (s->rx_head == NULL)
            s->rx_tail = NULL;
        s->rx_bytes -= done;
    }
    return done;
}

ssize_t tcpsock_recv_nb(struct nomsock *s, void *buf, size_t n, int peek)
{
    size_t done;
    if (s->state == NS_LISTEN || s->state == NS_OPEN)
        return -ENOTCONN;
    if (s->rx_bytes == 0) {
        if (s->rd_eof || s->rd_shut)
            return 0;
        return s->state == NS_CONNECTED ? -EAGAIN : tcpsock_not_usable(s, 0);
    }
    done = tcpsock_copy_out(s, buf, n, peek);
    if (!peek) {
        s->rx_unopened += (u32_t)done;
        if (s->rx_unopened >= TCP_OPEN_WINDOW_BATCH)
            tcpsock_open_read(s);
        /* Reading can lose POLLIN (all read; end of stream keeps it) and gain nothing: forget
         * it if lost, so that the next data is reported (issue 16, as in send). */
        if (s->rx_bytes == 0 && !s->rd_eof && !s->rd_shut)
            s->notified &= (short)~POLLIN;
    }
    return (ssize_t)done;
}

static void tcpsock_drop_rx(struct nomsock *s)
{
    while (s->rx_head != NULL) {
        struct pbuf *q = s->rx_head;
        s->rx_head = q->next;
        q->next = NULL;
        pbuf_free(q);
    }
    s->rx_tail = NULL;
    s->rx_bytes = 0;
    s->rx_off = 0;
}

int tcpsock_shutdown_nb(struct nomsock *s, int how)
{
    if (s->state != NS_CONNECTED)
        return s->state == NS_DEAD ? 0 : -ENOTCONN;
    if (how == SHUT_RD || how == SHUT_RDWR) {
        s->rx_unopened += (u32_t)s->rx_bytes; /* dropped unread: the window gets it back too */
        s->rd_shut = 1;
        tcpsock_drop_rx(s);
        tcpsock_open_read(s);
    }
    if ((how == SHUT_WR || how == SHUT_RDWR) && !s->wr_shut) {
        err_t err = tcp_shutdown(s->pcb.tcp, 0, 1);
        if (err != ERR_OK)
            return -nomsock_err_from_lwip(err);
        s->wr_shut = 1;
    }
    nomsock_changed(s);
    return 0;
}

/* Detaches the socket from its pcb; then lwIP finishes (or resets) the connection alone. */
static void tcpsock_release_pcb(struct tcp_pcb *pcb, int reset)
{
    tcp_arg(pcb, NULL);
    tcp_recv(pcb, NULL); /* lwIP's tcp_recv_null: discards late data, answers FIN */
    tcp_sent(pcb, NULL);
    tcp_err(pcb, NULL);
    if (reset || tcp_close(pcb) != ERR_OK)
        tcp_abort(pcb);
}

void tcpsock_close_nb(struct nomsock *s)
{
    if (s->state == NS_LISTEN) {
        while (s->accept_head != NULL) { /* unaccepted connections are reset, as on Linux */
            struct nomsock *c = s->accept_head;
            s->accept_head = c->accept_next;
            c->linger_abort = 1;
            tcpsock_close_nb(c);
            nomsock_free(c);
        }
        tcp_arg(s->pcb.tcp, NULL);
        tcp_accept(s->pcb.tcp, NULL);
        tcp_close(s->pcb.tcp); /* a listen pcb always closes */
    } else if (s->pcb.tcp != NULL) {
        /* Unread data or SO_LINGER 0: reset instead of a graceful close (RFC 2525 2.17,
         * and what Linux does), so the peer learns its data was not read. */
        int reset = s->rx_bytes > 0 || s->linger_abort || s->state == NS_CONNECTING;
        /* lwIP's tcp_close resets too when rcv_wnd is short of its maximum (data not read):
         * what was read but not yet given back is given back first. */
        tcpsock_open_read(s);
        tcpsock_release_pcb(s->pcb.tcp, reset);
    }
    s->pcb.tcp = NULL;
    tcpsock_drop_rx(s);
}

short tcpsock_readiness(struct nomsock *s)
{
    short r = 0;
    switch (s->state) {
    case NS_LISTEN:
        return s->accept_head != NULL ? POLLIN : 0;
    case NS_OPEN:
        return POLLOUT | POLLHUP; /* never connected: Linux reports the same */
    case NS_CONNECTING:
        return 0;
    case NS_DEAD:
        r = POLLIN | POLLOUT | POLLHUP;
        return s->error ? r | POLLERR : r;
    case NS_CONNECTED:
        break;
    }
    if (s->rx_bytes > 0 || s->rd_eof || s->rd_shut)
        r |= POLLIN;
    if (s->wr_shut || tcpsock_writable(s->pcb.tcp))
        r |= POLLOUT;
    if ((s->rd_eof || s->rd_shut) && s->wr_shut)
        r |= POLLHUP;
    return r;
}
