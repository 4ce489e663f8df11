/* np_run.c: one NetPIPE run as a function call (np_run.h): exit() comes back here through
 * longjmp, and a ledger of the run's sockets and allocations is settled at its end. */
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include "np_run.h"

/* A NetPIPE receiver holds at most two sockets (listening, connected) and four blocks (its
 * buffers; -I adds the cache-flushing pool). Twice that, so running out is a bug. */
#define NP_MAX_FDS 8
#define NP_MAX_BLOCKS 16
/* Streaming (-s, -r) reconnects after every trial and the transmitter does so at once; one
 * that has not come back after this long is gone (killed between trials), and the next
 * transmitter would find this receiver in the middle of a run: the run ends instead. */
#define NP_RECONNECT_TIMEOUT_MS 10000

extern int optind; /* getopt's: 0 makes newlib's getopt start over completely */

struct np_ctx {
    int active;
    jmp_buf exit_jump;
    int status;
    int served, listened, parse_locked;
    const char *label;
    unsigned run;
    int fds[NP_MAX_FDS];
    void *blocks[NP_MAX_BLOCKS];
};

/* Thread-local and static, not on np_run's stack: what NetPIPE changes before it calls exit()
 * must still be there after the longjmp (C11 7.13.2.1p3). */
static __thread struct np_ctx ctx;
static pthread_mutex_t parse_lock = PTHREAD_MUTEX_INITIALIZER;

void np_say(const char *fmt, ...)
{
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n > 0)
        (void)!write(STDERR_FILENO, line, n < (int)sizeof line ? (size_t)n : sizeof line - 1);
}

static void parse_unlock(void)
{
    if (ctx.parse_locked) {
        ctx.parse_locked = 0;
        pthread_mutex_unlock(&parse_lock);
    }
}

/* The ledgers: each finds `old` among its slots and puts `new` there (-1 / NULL: a free slot).
 * Returns 0, or -1 if `old` is absent. */
static int block_swap(void *old, void *new)
{
    for (int i = 0; i < NP_MAX_BLOCKS; i++)
        if (ctx.blocks[i] == old) {
            ctx.blocks[i] = new;
            return 0;
        }
    return -1;
}

static int fd_swap(int old, int new)
{
    for (int i = 0; i < NP_MAX_FDS; i++)
        if (ctx.fds[i] == old) {
            ctx.fds[i] = new;
            return 0;
        }
    return -1;
}

/* A ledger is full: the run cannot be cleaned up after, so it ends. */
static _Noreturn void ledger_full(const char *what)
{
    np_say("NPtcp: %s: run %u: more %s than a receiver uses; run ended\n", ctx.label, ctx.run,
           what);
    np_nptcp_exit(EX_SOFTWARE);
}

static void track_fd(int fd)
{
    if (ctx.active && fd >= 0 && fd_swap(-1, fd) != 0) {
        close(fd);
        ledger_full("sockets");
    }
}

static void *track_block(void *p)
{
    if (ctx.active && p && block_swap(NULL, p) != 0) {
        free(p);
        ledger_full("memory blocks");
    }
    return p;
}

/* What the run left behind: its sockets (a listening socket would keep the port) and blocks. */
static void settle(void)
{
    for (int i = 0; i < NP_MAX_FDS; i++)
        if (ctx.fds[i] >= 0)
            close(ctx.fds[i]);
    for (int i = 0; i < NP_MAX_BLOCKS; i++)
        free(ctx.blocks[i]);
}

void np_run(const char *label, unsigned run, int argc, char **argv, struct np_run_result *result)
{
    char **args = calloc((size_t)argc + 1, sizeof *args);
    memset(&ctx, 0, sizeof ctx);
    memset(ctx.fds, 0xff, sizeof ctx.fds); /* -1: free slot */
    ctx.label = label;
    ctx.run = run;
    if (!args) {
        np_say("NPtcp: %s: out of memory\n", label);
        *result = (struct np_run_result){.status = EX_OSERR};
        return;
    }
    memcpy(args, argv, (size_t)argc * sizeof *args);
    pthread_mutex_lock(&parse_lock);
    ctx.parse_locked = 1;
    optind = 0;
    ctx.active = 1;
    if (setjmp(ctx.exit_jump) == 0)
        ctx.status = np_nptcp_main(argc, args);
    ctx.active = 0;
    parse_unlock();
    settle();
    free(args);
    *result = (struct np_run_result){.status = ctx.status, .served = ctx.served};
}

_Noreturn void np_nptcp_exit(int status)
{
    if (!ctx.active)
        exit(status);
    ctx.status = status;
    longjmp(ctx.exit_jump, 1);
}

/* NetPIPE's first socket() comes after its option parsing: getopt's globals are free again. */
int np_nptcp_socket(int domain, int type, int protocol)
{
    parse_unlock();
    int fd = socket(domain, type, protocol);
    track_fd(fd);
    return fd;
}

int np_nptcp_accept(int fd, struct sockaddr *addr, socklen_t *len)
{
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    if (ctx.active && ctx.served && poll(&pfd, 1, NP_RECONNECT_TIMEOUT_MS) == 0) {
        np_say("NPtcp: %s: run %u: the transmitter did not reconnect in %d s; run ended\n",
               ctx.label, ctx.run, NP_RECONNECT_TIMEOUT_MS / 1000);
        np_nptcp_exit(EX_PROTOCOL);
    }
    int conn = accept(fd, addr, len);
    if (conn >= 0)
        ctx.served = 1;
    track_fd(conn);
    return conn;
}

int np_nptcp_listen(int fd, int backlog)
{
    int r = listen(fd, backlog);
    if (r == 0 && ctx.active && !ctx.listened) {
        ctx.listened = 1;
        if (!np_quiet || ctx.run == 1)
            np_say("NPtcp: %s: run %u listening\n", ctx.label, ctx.run);
    }
    return r;
}

int np_nptcp_close(int fd)
{
    if (ctx.active)
        fd_swap(fd, -1);
    return close(fd);
}

void *np_nptcp_malloc(size_t size)
{
    return track_block(malloc(size));
}

void *np_nptcp_calloc(size_t n, size_t size)
{
    return track_block(calloc(n, size));
}

void np_nptcp_free(void *p)
{
    if (ctx.active && p)
        block_swap(p, NULL);
    free(p);
}
