/* fuzz_text.c: libFuzzer harness of memcached's text protocol (proto_text.c of Debian's
 * memcached 1.6.18, the one nom runs). The real server runs in this process (its main, renamed
 * memcached_main, on a thread: two workers, 64 MiB, TCP on 127.0.0.1 as on nom; a Unix socket
 * would fuzz a path nom has not: `stats conns` over one reads past the peer's address,
 * memcached.c:2091, which its comment there admits), so libFuzzer sees the
 * coverage of its parser and state machine. Each input is what one client sends on a fresh
 * connection; the harness writes it, half-closes, and reads the answers until the server
 * closes. A crash of the server (ASan, UBSan, an assert) is a crash of this process. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <time.h>
#include <unistd.h>

int memcached_main(int argc, char **argv);

static struct sockaddr_in server_addr = { .sin_family = AF_INET };
static char port_arg[8];

static void *server(void *arg)
{
    (void)arg;
    /* -B ascii: the text protocol only. nom's memcached negotiates (-B auto), and a first byte
     * 0x80 turns a connection binary: that protocol is not this harness's (its first minute
     * stopped in util.c:247, mc_swap64's signed shift, undefined but harmless under gcc). */
    char *argv[] = { "memcached", "-l", "127.0.0.1", "-p", port_arg, "-U", "0", "-u", "root",
                     "-m", "64", "-t", "2", "-c", "1024", "-B", "ascii", NULL };
    memcached_main(17, argv);
    fprintf(stderr, "fuzz_text: memcached returned\n");
    abort();
}

static int connect_server(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&server_addr, sizeof server_addr) == 0) {
        int on = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
        fcntl(fd, F_SETFL, O_NONBLOCK);
        return fd;
    }
    if (fd >= 0)
        close(fd);
    return -1;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    pthread_t t;
    /* A free port: the kernel picks one for a socket bound to port 0, which is then closed. */
    socklen_t len = sizeof server_addr;
    server_addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int probe = socket(AF_INET, SOCK_STREAM, 0);
    if (probe < 0 || bind(probe, (struct sockaddr *)&server_addr, sizeof server_addr) != 0
        || getsockname(probe, (struct sockaddr *)&server_addr, &len) != 0)
        abort();
    close(probe);
    snprintf(port_arg, sizeof port_arg, "%u", ntohs(server_addr.sin_port));
    if (pthread_create(&t, NULL, server, NULL) != 0)
        abort();
    for (int i = 0; i < 500; i++) { /* up to 5 s for the listener */
        int fd = connect_server();
        if (fd >= 0) {
            close(fd);
            return 0;
        }
        usleep(10000);
    }
    fprintf(stderr, "fuzz_text: memcached did not start\n");
    abort();
}

/* How long the server may stay silent after the input's end before the answer counts as
 * complete (LLVMFuzzerTestOneInput). */
#define QUIET_MS 5

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char answer[65536];
    int fd = connect_server();
    if (fd < 0) {
        fprintf(stderr, "fuzz_text: cannot connect (%s)\n", strerror(errno));
        abort(); /* the server is gone */
    }
    size_t sent = 0;
    int half_closed = 0;
    uint64_t deadline = now_ms() + 5000, last_answer = 0;
    while (now_ms() < deadline) {
        if (sent == size && !half_closed) {
            shutdown(fd, SHUT_WR);
            half_closed = 1;
            last_answer = now_ms();
        }
        /* Done when the server has been silent for QUIET_MS after our end of input. The server
         * (in this process) answers in microseconds and closes on EOF, except for a connection
         * that became a log stream (`watch`): the logger thread owns it and never closes it on
         * EOF. Waiting for that close cost 50-300 ms per `watch` input, more with each watcher
         * left behind, and once the corpus held `watch` inputs a fuzzing hour made 16 thousand
         * executions (about 4 a second; 400 a second with this cut). Cutting a slow answer
         * short costs nothing: the server still handles the input, and its crash is still
         * this process's. */
        if (half_closed && now_ms() - last_answer > QUIET_MS)
            break;
        struct pollfd p = { fd, POLLIN | (half_closed ? 0 : POLLOUT), 0 };
        if (poll(&p, 1, half_closed ? QUIET_MS : 100) <= 0)
            continue;
        if (p.revents & POLLOUT) {
            ssize_t n = send(fd, data + sent, size - sent, MSG_NOSIGNAL);
            if (n > 0)
                sent += (size_t)n;
            else if (n < 0 && errno != EAGAIN)
                break; /* the server closed on us (e.g. a line too long) */
        }
        if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
            ssize_t n = recv(fd, answer, sizeof answer, 0);
            if (n == 0 || (n < 0 && errno != EAGAIN))
                break;
            last_answer = now_ms();
        }
    }
    /* Closed with a reset: a client that half-closes first keeps TIME_WAIT, and a few
     * thousand inputs a minute would use up the ephemeral ports (58 executions/s, not 1700). */
    struct linger reset = { .l_onoff = 1, .l_linger = 0 };
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
    close(fd);
    return 0;
}
