/*
 * netecho.c: the in-QEMU test application of net/ (tests/test_net_qemu.py). It brings up the
 * network the way every nom application does (nom_net_start: DHCP or --ip/--gw), then serves,
 * from one thread and one poll() loop over libnom's fd table:
 *   TCP port 7   echo, many connections at once
 *   UDP port 7   echo
 *   UDP port 8   control: "stats" -> the stack's counters as JSON, "w=US" -> sets W,
 *                "exit" -> answers, closes everything and exits 0
 * It prints "netecho: serving" once listening, and "netecho: exit" at the end.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <nom/net.h>

#define MAX_CONN 64

static struct pollfd pfd[3 + MAX_CONN];
static unsigned npfd;

static int bound_socket(int type, int port)
{
    struct sockaddr_in a;
    int fd = socket(AF_INET, type, 0), one = 1;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        (type == SOCK_STREAM && listen(fd, 32) != 0)) {
        printf("netecho: socket/bind/listen port %d failed: %s\n", port, strerror(errno));
        exit(1);
    }
    return fd;
}

static int stats_json(char *buf, size_t n)
{
    struct nom_net_stats s;
    nom_net_stats(&s);
    return snprintf(buf, n,
        "{\"batching_delay_us\":%u,\"rx_packets\":%llu,\"tx_packets\":%llu,"
        "\"rx_batches\":%llu,\"tx_batches\":%llu,\"tx_kicks\":%llu,\"interrupts\":%llu,"
        "\"rx_nobuf\":%llu,\"tx_dropped\":%llu,\"rx_bad\":%llu,\"tx_bad\":%llu}",
        (unsigned)nom_net_batching_delay_us(), (unsigned long long)s.rx_packets,
        (unsigned long long)s.tx_packets, (unsigned long long)s.rx_batches,
        (unsigned long long)s.tx_batches, (unsigned long long)s.tx_kicks,
        (unsigned long long)s.interrupts, (unsigned long long)s.rx_nobuf,
        (unsigned long long)s.tx_dropped, (unsigned long long)s.rx_bad,
        (unsigned long long)s.tx_bad);
}

/* One control datagram; returns 1 if the application should exit. */
static int control(int fd)
{
    char req[64], rep[512];
    struct sockaddr_in from;
    socklen_t len = sizeof from;
    ssize_t n = recvfrom(fd, req, sizeof req - 1, 0, (struct sockaddr *)&from, &len);
    int quit = 0;
    if (n <= 0)
        return 0;
    req[n] = '\0';
    if (strncmp(req, "w=", 2) == 0)
        nom_net_set_batching_delay_us((uint32_t)strtoul(req + 2, NULL, 10));
    quit = strcmp(req, "exit") == 0;
    n = stats_json(rep, sizeof rep);
    sendto(fd, rep, (size_t)n, 0, (struct sockaddr *)&from, len);
    return quit;
}

static void udp_echo(int fd)
{
    static char buf[65536];
    struct sockaddr_in from;
    socklen_t len = sizeof from;
    ssize_t n = recvfrom(fd, buf, sizeof buf, 0, (struct sockaddr *)&from, &len);
    if (n >= 0)
        sendto(fd, buf, (size_t)n, 0, (struct sockaddr *)&from, len);
}

/* Echoes what one connection sent; closes it at EOF or error. The connection is blocking, so a
 * slow reader on the other side slows this one loop: fine for a test. */
static void tcp_echo(unsigned i)
{
    static char buf[16384];
    ssize_t n = read(pfd[i].fd, buf, sizeof buf);
    size_t done = 0;
    while (n > 0 && done < (size_t)n) {
        ssize_t w = write(pfd[i].fd, buf + done, (size_t)n - done);
        if (w <= 0)
            break;
        done += (size_t)w;
    }
    if (n <= 0 || done < (size_t)n) {
        close(pfd[i].fd);
        pfd[i] = pfd[--npfd];
    }
}

int main(int argc, char **argv)
{
    int r = nom_net_start(&argc, argv), quit = 0;
    if (r != 0) {
        printf("netecho: nom_net_start: %s\n", strerror(-r));
        return 1;
    }
    pfd[0].fd = bound_socket(SOCK_STREAM, 7);
    pfd[1].fd = bound_socket(SOCK_DGRAM, 7);
    pfd[2].fd = bound_socket(SOCK_DGRAM, 8);
    npfd = 3;
    for (unsigned i = 0; i < 3 + MAX_CONN; i++)
        pfd[i].events = POLLIN;
    printf("netecho: serving\n");
    fflush(stdout);
    while (!quit) {
        if (poll(pfd, npfd, -1) < 0)
            continue;
        for (unsigned i = npfd; i-- > 3;)
            if (pfd[i].revents)
                tcp_echo(i);
        if (pfd[0].revents & POLLIN) {
            int c = accept(pfd[0].fd, NULL, NULL);
            if (c >= 0 && npfd < 3 + MAX_CONN)
                pfd[npfd++].fd = c;
            else if (c >= 0)
                close(c);
        }
        if (pfd[1].revents & POLLIN)
            udp_echo(pfd[1].fd);
        if (pfd[2].revents & POLLIN)
            quit = control(pfd[2].fd);
    }
    for (unsigned i = 0; i < npfd; i++)
        close(pfd[i].fd);
    printf("netecho: exit\n");
    return 0;
}
