/* epoll.c: epoll(7) in a booted nom (libnom/src/epoll.c), as ported servers use it: pipes and
 * socketpairs watched level-triggered, edge-triggered and one-shot, a thread woken by another's
 * write, timeouts, a closed descriptor leaving the set, the epoll descriptor in poll(), and each
 * bad argument's errno. Prints "ok NAME" per case and "libnom epoll: N/N passed"
 * (tests/test_guest.py boots it beside the conformance application). */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char why[200];
#define CHECK(cond, ...) do { if (!(cond)) { snprintf(why, sizeof why, __VA_ARGS__); return 0; } } while (0)

static int watch(int ep, int fd, uint32_t events)
{
    struct epoll_event e = { .events = events, .data.fd = fd };
    return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e);
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Level-triggered: a readable pipe is reported at every wait until drained. */
static int test_level_triggered(void)
{
    int p[2], ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev[4];
    char buf[8];
    CHECK(ep >= 0 && pipe(p) == 0, "create: %d", errno);
    CHECK(watch(ep, p[0], EPOLLIN) == 0, "add: %d", errno);
    CHECK(epoll_wait(ep, ev, 4, 0) == 0, "an empty pipe is not readable");
    CHECK(write(p[1], "abc", 3) == 3, "write");
    for (int i = 0; i < 2; i++)
        CHECK(epoll_wait(ep, ev, 4, 0) == 1 && ev[0].events == EPOLLIN && ev[0].data.fd == p[0],
              "round %d: readable reported (%x)", i, ev[0].events);
    CHECK(read(p[0], buf, sizeof buf) == 3, "read");
    CHECK(epoll_wait(ep, ev, 4, 0) == 0, "drained: quiet");
    close(p[1]);
    CHECK(epoll_wait(ep, ev, 4, 0) == 1 && (ev[0].events & EPOLLHUP), "writer gone: hang-up");
    close(p[0]);
    close(ep);
    return 1;
}

/* Edge-triggered reports a pipe once per readiness gained; one-shot once until modified. */
static int test_edge_and_one_shot(void)
{
    int a[2], b[2], ep = epoll_create(1);
    struct epoll_event ev[4];
    char buf[8];
    CHECK(ep >= 0 && pipe(a) == 0 && pipe(b) == 0, "create");
    CHECK(watch(ep, a[0], EPOLLIN | EPOLLET) == 0 && watch(ep, b[0], EPOLLIN | EPOLLONESHOT) == 0,
          "add: %d", errno);
    CHECK(write(a[1], "x", 1) == 1 && write(b[1], "y", 1) == 1, "write");
    CHECK(epoll_wait(ep, ev, 4, 0) == 2, "both reported once");
    CHECK(epoll_wait(ep, ev, 4, 0) == 0, "then neither while still readable");
    CHECK(read(a[0], buf, 8) == 1 && write(a[1], "z", 1) == 1, "drain and refill a");
    CHECK(epoll_wait(ep, ev, 4, 0) == 1 && ev[0].data.fd == a[0], "a again after a new edge");
    struct epoll_event mod = { .events = EPOLLIN | EPOLLONESHOT, .data.u64 = 42 };
    CHECK(epoll_ctl(ep, EPOLL_CTL_MOD, b[0], &mod) == 0, "re-arm b: %d", errno);
    CHECK(epoll_wait(ep, ev, 4, 0) == 1 && ev[0].data.u64 == 42, "b after re-arming");
    close(ep);
    for (int i = 0; i < 2; i++)
        close(a[i]), close(b[i]);
    return 1;
}

static int wake_fd;

static void *late_writer(void *arg)
{
    (void)arg;
    usleep(20000);
    write(wake_fd, "ping", 4);
    return NULL;
}

/* A thread asleep in epoll_wait is woken by another's write to a socketpair; a timeout ends a
 * wait with nothing; a closed descriptor leaves the set (its number, reused, is a new file). */
static int test_wake_timeout_close(void)
{
    int sv[2], ep = epoll_create1(0);
    struct epoll_event ev[2];
    pthread_t t;
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0 && ep >= 0, "create");
    CHECK(watch(ep, sv[1], EPOLLIN) == 0, "add");
    uint64_t t0 = now_ms();
    CHECK(epoll_wait(ep, ev, 2, 30) == 0, "a timeout returns 0");
    CHECK(now_ms() - t0 >= 30, "the timeout waited %llu ms", (unsigned long long)(now_ms() - t0));
    wake_fd = sv[0];
    pthread_create(&t, NULL, late_writer, NULL);
    CHECK(epoll_wait(ep, ev, 2, 5000) == 1 && ev[0].data.fd == sv[1] &&
          (ev[0].events & EPOLLIN), "woken by the writer (%x)", ev[0].events);
    pthread_join(t, NULL);
    close(sv[1]);
    int p[2];
    CHECK(pipe(p) == 0 && write(p[1], "q", 1) == 1, "a new pipe");
    CHECK(epoll_wait(ep, ev, 2, 0) == 0, "the closed socket is no longer watched");
    struct epoll_event e = { .events = EPOLLIN };
    CHECK(epoll_ctl(ep, EPOLL_CTL_DEL, p[0], &e) == -1 && errno == ENOENT,
          "a reused number is a file the set never had");
    close(sv[0]), close(p[0]), close(p[1]), close(ep);
    return 1;
}

/* A full socketpair end becomes writable when the peer reads: the event reaches the writer's
 * end, not only the reader's (the two pipes under a socketpair, libnom/src/pipe.c). */
static int test_socketpair_writable(void)
{
    static char chunk[4096];
    int sv[2], ep = epoll_create1(0);
    struct epoll_event ev[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) == 0 && ep >= 0, "setup");
    size_t filled = 0;
    ssize_t w;
    while ((w = write(sv[0], chunk, sizeof chunk)) > 0)
        filled += (size_t)w;
    CHECK(w == -1 && errno == EAGAIN && filled > 0, "filled %zu bytes", filled);
    CHECK(watch(ep, sv[0], EPOLLOUT | EPOLLET) == 0, "add");
    CHECK(epoll_wait(ep, ev, 2, 0) == 0, "full: not writable");
    for (size_t got = 0; got < 2 * sizeof chunk; got += sizeof chunk)
        CHECK(read(sv[1], chunk, sizeof chunk) == (ssize_t)sizeof chunk, "peer reads");
    CHECK(epoll_wait(ep, ev, 2, 0) == 1 && ev[0].data.fd == sv[0] && ev[0].events == EPOLLOUT,
          "writable after the peer read (%x)", ev[0].events);
    close(sv[1]);
    CHECK(epoll_wait(ep, ev, 2, 0) == 1 && (ev[0].events & EPOLLERR), "peer gone: error");
    close(sv[0]), close(ep);
    return 1;
}

/* The epoll descriptor itself: readable in poll() while a watched file is ready. */
static int test_epoll_fd_in_poll(void)
{
    int p[2], ep = epoll_create1(0);
    struct stat st;
    CHECK(pipe(p) == 0 && watch(ep, p[0], EPOLLIN) == 0, "setup");
    struct pollfd pf = { ep, POLLIN, 0 };
    CHECK(poll(&pf, 1, 0) == 0, "nothing ready");
    CHECK(write(p[1], "r", 1) == 1, "write");
    CHECK(poll(&pf, 1, 0) == 1 && (pf.revents & POLLIN), "ready: %x", pf.revents);
    CHECK(fstat(ep, &st) == 0 && (st.st_mode & S_IFMT) == 0, "an anonymous inode: %o",
          (unsigned)st.st_mode);
    close(p[0]), close(p[1]), close(ep);
    return 1;
}

/* Bad arguments get Linux's errno and change nothing. */
static int test_errors(void)
{
    int p[2], ep = epoll_create1(0), other = epoll_create1(0);
    struct epoll_event e = { .events = EPOLLIN }, ev[1];
    CHECK(pipe(p) == 0 && ep >= 0 && other >= 0, "setup");
    CHECK(epoll_create(0) == -1 && errno == EINVAL, "size 0");
    CHECK(epoll_create1(12345) == -1 && errno == EINVAL, "bad flags");
    CHECK(epoll_ctl(ep, 99, p[0], &e) == -1 && errno == EINVAL, "bad op");
    CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], NULL) == -1 && errno == EFAULT, "no event");
    CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, 999, &e) == -1 && errno == EBADF, "closed fd");
    CHECK(epoll_ctl(999, EPOLL_CTL_ADD, p[0], &e) == -1 && errno == EBADF, "closed epfd");
    CHECK(epoll_ctl(p[1], EPOLL_CTL_ADD, p[0], &e) == -1 && errno == EINVAL, "not an epoll");
    CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, ep, &e) == -1 && errno == EINVAL, "itself");
    CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, other, &e) == -1 && errno == EINVAL, "nested");
    CHECK(epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &e) == -1 && errno == ENOENT, "modify unwatched");
    CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &e) == 0, "add");
    CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &e) == -1 && errno == EEXIST, "add twice");
    e.events |= EPOLLEXCLUSIVE;
    CHECK(epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &e) == -1 && errno == EINVAL, "exclusive at MOD");
    CHECK(epoll_wait(ep, ev, 0, 0) == -1 && errno == EINVAL, "maxevents 0");
    CHECK(epoll_wait(ep, NULL, 1, 0) == -1 && errno == EFAULT, "no buffer");
    CHECK(epoll_wait(p[0], ev, 1, 0) == -1 && errno == EINVAL, "wait on a pipe");
    CHECK(epoll_wait(999, ev, 1, 0) == -1 && errno == EBADF, "wait on a closed fd");
    CHECK(epoll_ctl(ep, EPOLL_CTL_DEL, p[0], NULL) == 0, "delete (NULL event allowed)");
    CHECK(write(p[1], "w", 1) == 1 && epoll_wait(ep, ev, 1, 0) == 0, "deleted: not reported");
    close(p[0]), close(p[1]), close(ep), close(other);
    return 1;
}

static const struct {
    const char *name;
    int (*fn)(void);
} tests[] = {
    { "epoll_level_triggered", test_level_triggered },
    { "epoll_edge_and_one_shot", test_edge_and_one_shot },
    { "epoll_wake_timeout_close", test_wake_timeout_close },
    { "epoll_socketpair_writable", test_socketpair_writable },
    { "epoll_fd_in_poll", test_epoll_fd_in_poll },
    { "epoll_errors", test_errors },
};

int main(void)
{
    int passed = 0, n = (int)(sizeof tests / sizeof tests[0]);
    for (int i = 0; i < n; i++) {
        why[0] = 0;
        int ok = tests[i].fn();
        printf("%s %s%s%s\n", ok ? "ok" : "FAIL", tests[i].name, ok ? "" : ": ", why);
        passed += ok;
    }
    printf("libnom epoll: %d/%d passed\n", passed, n);
    return passed == n ? 0 : 1;
}
