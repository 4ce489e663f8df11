/*
 * adaptapp.c: the in-QEMU test application of libnom's controller (test_adapt_qemu.py): a TCP
 * echo server on port 7 (one poll() loop, up to 64 connections) running the controller with
 * the test profile (libnom/tests/profit/profile.json). A line "stats\n" on a connection is
 * answered with one line instead of an echo:
 *   "w=US load=many|single price_micro=P rate_micro=R board_w_ns=.. board_price_micro=..
 *    board_rate_micro=.. subscribed=0|1\n"
 * the controller's status and what the bulletin board holds in this application's row.
 * Options: nom_net_start's, then nom_adapt_start's (nom/adapt.h). Prints "adaptapp: serving".
 */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <nom/adapt.h>
#include <nom/bb.h>
#include <nom/net.h>

#define MAX_CONN 64

static struct pollfd pfd[1 + MAX_CONN];
static unsigned npfd;

static int listener(int port)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 64) != 0) {
        printf("adaptapp: listen on %d failed: %s\n", port, strerror(errno));
        return -1;
    }
    return fd;
}

static int status_line(char *buf, size_t n)
{
    struct nom_adapt_status st;
    struct nom_bb_app row = {0};
    nom_adapt_status(&st);
    nom_bb_app(nom_self_id(), &row);
    return snprintf(buf, n,
                    "w=%u load=%s price_micro=%lld rate_micro=%lld board_w_ns=%u "
                    "board_price_micro=%lld board_rate_micro=%lld subscribed=%u\n",
                    (unsigned)st.w_us, nom_load_name(st.load), llround(st.price * 1e6),
                    llround(st.profit_rate * 1e6), (unsigned)row.report.batching_delay_ns,
                    (long long)row.report.price_seen_micro,
                    (long long)row.report.profit_rate_micro,
                    (unsigned)row.report.subscribe_prices);
}

/* Echoes what fd has (or answers "stats"); 0, or -1 when the connection ended. */
static int serve(int fd)
{
    char buf[2048];
    ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0)
        return -1;
    if (n == 6 && memcmp(buf, "stats\n", 6) == 0)
        n = status_line(buf, sizeof buf);
    return write(fd, buf, (size_t)n) == n ? 0 : -1;
}

static void accept_one(int lfd)
{
    int fd = accept(lfd, NULL, NULL);
    if (fd < 0)
        return;
    if (npfd == 1 + MAX_CONN) {
        close(fd);
        return;
    }
    pfd[npfd++] = (struct pollfd){.fd = fd, .events = POLLIN};
}

int main(int argc, char **argv)
{
    int r = nom_net_start(&argc, argv);
    if (r != 0) {
        printf("adaptapp: network: %s\n", strerror(-r));
        return 1;
    }
    if ((r = nom_adapt_start(&argc, argv, &nom_adapt_profile)) != 0) {
        printf("adaptapp: controller: %s\n", strerror(-r));
        return 1;
    }
    int lfd = listener(7);
    if (lfd < 0)
        return 1;
    pfd[0] = (struct pollfd){.fd = lfd, .events = POLLIN};
    npfd = 1;
    printf("adaptapp: serving\n");
    fflush(stdout);
    for (;;) {
        if (poll(pfd, npfd, -1) < 0)
            return 1;
        if (pfd[0].revents & POLLIN)
            accept_one(lfd);
        for (unsigned i = 1; i < npfd; i++) {
            if (pfd[i].revents && serve(pfd[i].fd) != 0) {
                close(pfd[i].fd);
                pfd[i--] = pfd[--npfd];
            }
        }
    }
}
