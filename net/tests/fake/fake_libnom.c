/* fake_libnom.c: host implementation of the libnom calls net/ makes (fake_libnom.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <sys/mman.h>

#include <nom/dma.h>
#include <nom/fd.h>
#include <nom/sched.h>
#include <nom/time.h>

#include "fake_libnom.h"

#define FAKE_FDS 1024
#define FAKE_WATCH 4

static struct { const struct nom_file_ops *ops; void *priv; int nonblock; } fds[FAKE_FDS];
static struct nom_idle_hook *hooks;
static struct nom_timer *timers[64];
static unsigned ntimers;
static int watch[FAKE_WATCH], nwatch;
static int preempt_depth;
static uint64_t fd_events;
static uint64_t tsc_hz;

/* ---- time: the real TSC (nom_tsc is inline rdtsc), calibrated against CLOCK_MONOTONIC ---- */

uint64_t nom_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t nom_tsc_hz(void)
{
    if (tsc_hz == 0) {
        uint64_t t0 = nom_now_ns(), c0 = nom_tsc(), t1, c1;
        struct timespec d = { 0, 20 * 1000 * 1000 };
        nanosleep(&d, NULL);
        t1 = nom_now_ns();
        c1 = nom_tsc();
        tsc_hz = (c1 - c0) * 1000000000u / (t1 - t0);
    }
    return tsc_hz;
}

uint64_t nom_us_to_tsc(uint64_t us)
{
    return us * nom_tsc_hz() / 1000000u;
}

/* ---- scheduler ---- */

void nom_preempt_disable(void) { preempt_depth++; }

void nom_preempt_enable(void)
{
    if (--preempt_depth < 0) {
        fprintf(stderr, "fake_libnom: preempt_enable without disable\n");
        abort();
    }
}

void nom_idle_hook_add(struct nom_idle_hook *hook)
{
    hook->next = hooks;
    hooks = hook;
}

/* No mutex releases poll here: the tests drive the loop's calls themselves. */
void nom_soft_deadline_set(uint64_t tsc) { (void)tsc; }

void nom_timer_add(struct nom_timer *t, uint64_t deadline, void (*fn)(void *), void *arg)
{
    t->deadline = deadline;
    t->fn = fn;
    t->arg = arg;
    if (t->heap_slot == 0) {
        if (ntimers == 64)
            abort();
        timers[ntimers++] = t;
        t->heap_slot = ntimers;
    }
}

int nom_timer_cancel(struct nom_timer *t)
{
    for (unsigned i = 0; i < ntimers; i++) {
        if (timers[i] == t) {
            timers[i] = timers[--ntimers];
            t->heap_slot = 0;
            return 1;
        }
    }
    return 0;
}

static int run_due_timers(void)
{
    uint64_t now = nom_tsc();
    int ran = 0;
    for (unsigned i = 0; i < ntimers;) {
        struct nom_timer *t = timers[i];
        if (t->deadline > now) {
            i++;
            continue;
        }
        nom_timer_cancel(t);
        preempt_depth++;
        t->fn(t->arg);
        preempt_depth--;
        ran = 1;
        i = 0;
    }
    return ran;
}

static uint64_t next_timer(void)
{
    uint64_t d = 0;
    for (unsigned i = 0; i < ntimers; i++)
        if (d == 0 || timers[i]->deadline < d)
            d = timers[i]->deadline;
    return d;
}

void fake_sched_watch(int hostfd)
{
    if (nwatch < FAKE_WATCH)
        watch[nwatch++] = hostfd;
}

/* Sleeps in poll(2) on the watched wires until one is readable or `until` (TSC, 0: 10 ms). */
static void host_block(uint64_t until)
{
    struct pollfd p[FAKE_WATCH];
    uint64_t now = nom_tsc(), t = next_timer();
    int ms = 10;
    if (t && (until == 0 || t < until))
        until = t;
    if (until) {
        uint64_t left = until > now ? until - now : 0;
        uint64_t m = left * 1000u / nom_tsc_hz() + 1;
        ms = m > 10 ? 10 : (int)m;
    }
    for (int i = 0; i < nwatch; i++) {
        p[i].fd = watch[i];
        p[i].events = POLLIN;
    }
    poll(p, (nfds_t)nwatch, ms);
}

/* The scheduler's idle path (nom/sched.h "Idle"): timers, hooks' poll, then arm and block. */
static void sched_idle_once(uint64_t until)
{
    int work = run_due_timers();
    preempt_depth++;
    for (struct nom_idle_hook *h = hooks; h != NULL; h = h->next)
        work |= h->poll(h->arg) != 0; /* NOM_IDLE_POLL_AGAIN: poll on, as libnom does */
    if (!work)
        for (struct nom_idle_hook *h = hooks; h != NULL; h = h->next)
            work |= h->arm(h->arg) != 0;
    preempt_depth--;
    if (!work)
        host_block(until);
}

void nom_sleep_until(uint64_t deadline)
{
    while (nom_tsc() < deadline)
        sched_idle_once(deadline);
}

void fake_run_ms(unsigned ms)
{
    nom_sleep_until(nom_tsc() + nom_us_to_tsc(ms * 1000ull));
}

/* ---- fd table ---- */

int nom_fd_install(const struct nom_file_ops *ops, void *priv)
{
    for (int fd = 3; fd < FAKE_FDS; fd++) {
        if (fds[fd].ops == NULL) {
            fds[fd].ops = ops;
            fds[fd].priv = priv;
            fds[fd].nonblock = 0;
            return fd;
        }
    }
    return -EMFILE;
}

void *nom_fd_priv(int fd, const struct nom_file_ops *ops)
{
    if (fd < 0 || fd >= FAKE_FDS || fds[fd].ops != ops)
        return NULL;
    return fds[fd].priv;
}

void nom_fd_event(const void *priv) { (void)priv; fd_events++; }
uint64_t fake_fd_events(void) { return fd_events; }

int nom_fd_nonblocking(int fd)
{
    if (fd < 0 || fd >= FAKE_FDS || fds[fd].ops == NULL)
        return -EBADF;
    return fds[fd].nonblock;
}

static short fd_revents(int fd, short events)
{
    if (fd < 0 || fd >= FAKE_FDS || fds[fd].ops == NULL)
        return POLLNVAL;
    return (short)(fds[fd].ops->poll(fds[fd].priv) & (events | POLLERR | POLLHUP));
}

int nom_fd_wait(int fd, short events, uint64_t deadline)
{
    if (preempt_depth != 0) {
        fprintf(stderr, "fake_libnom: nom_fd_wait with preemption disabled\n");
        abort();
    }
    for (;;) {
        short r = fd_revents(fd, events);
        if (r & POLLNVAL)
            return -EBADF;
        if (r)
            return r;
        if (deadline && nom_tsc() >= deadline)
            return -ETIMEDOUT;
        sched_idle_once(deadline);
    }
}

static ssize_t fd_io(int fd, void *buf, size_t n, int writing)
{
    if (fd < 0 || fd >= FAKE_FDS || fds[fd].ops == NULL)
        return -EBADF;
    for (;;) {
        int off = (fds[fd].ops->flags & NOM_FILE_PREEMPT_OFF) != 0; /* as libnom's transfer() */
        preempt_depth += off;
        ssize_t r = writing ? fds[fd].ops->write(fds[fd].priv, buf, n)
                            : fds[fd].ops->read(fds[fd].priv, buf, n);
        preempt_depth -= off;
        int w;
        if (r != -EAGAIN || fds[fd].nonblock)
            return r;
        w = nom_fd_wait(fd, writing ? POLLOUT : POLLIN, 0);
        if (w < 0)
            return w;
    }
}

static ssize_t ret(ssize_t r)
{
    if (r >= 0)
        return r;
    errno = (int)-r;
    return -1;
}

ssize_t fake_read(int fd, void *buf, size_t n) { return ret(fd_io(fd, buf, n, 0)); }
ssize_t fake_write(int fd, const void *buf, size_t n) { return ret(fd_io(fd, (void *)buf, n, 1)); }

int fake_close(int fd)
{
    const struct nom_file_ops *ops;
    if (fd < 0 || fd >= FAKE_FDS || fds[fd].ops == NULL)
        return (int)ret(-EBADF);
    ops = fds[fd].ops;
    fds[fd].ops = NULL;
    return (int)ret(ops->close(fds[fd].priv));
}

int nomfake_fcntl(int fd, int cmd, ...)
{
    va_list ap;
    long arg;
    if (fd < 0 || fd >= FAKE_FDS || fds[fd].ops == NULL)
        return (int)ret(-EBADF);
    va_start(ap, cmd);
    arg = va_arg(ap, long);
    va_end(ap);
    if (cmd == F_GETFL)
        return fds[fd].nonblock ? O_NONBLOCK : 0;
    if (cmd == F_SETFL) {
        fds[fd].nonblock = (arg & O_NONBLOCK) != 0;
        return 0;
    }
    return (int)ret(-EINVAL);
}

int fake_ioctl(int fd, unsigned long request, void *arg)
{
    if (fd < 0 || fd >= FAKE_FDS || fds[fd].ops == NULL)
        return (int)ret(-EBADF);
    if (fds[fd].ops->ioctl == NULL)
        return (int)ret(-ENOTTY);
    return (int)ret(fds[fd].ops->ioctl(fds[fd].priv, request, arg));
}

int fake_poll(struct pollfd *p, unsigned n, int timeout_ms)
{
    uint64_t deadline = 0;
    if (timeout_ms >= 0)
        deadline = nom_tsc() + nom_us_to_tsc((uint64_t)timeout_ms * 1000u);
    for (;;) {
        int ready = 0;
        for (unsigned i = 0; i < n; i++) {
            p[i].revents = p[i].fd < 0 ? 0 : fd_revents(p[i].fd, p[i].events); /* as poll(2) */
            ready += p[i].revents != 0;
        }
        if (ready || (timeout_ms >= 0 && nom_tsc() >= deadline))
            return ready;
        sched_idle_once(deadline);
    }
}

/* lwIP's heap opens its steps "physically contiguous" (nom/dma.h): on the host, opened
 * memory whose physical address is its virtual one, which fake_vnet expects of lent frames. */
int nom_dma_open(void *va, size_t bytes, uint64_t *phys)
{
    if (mprotect(va, bytes, PROT_READ | PROT_WRITE) != 0)
        return -ENOMEM;
    *phys = (uint64_t)(uintptr_t)va;
    return 0;
}
