/* mutex.c: pthread mutexes (normal, recursive, error-checking), spin locks and barriers over
 * libnom's wait queues. On one core, a section with preemption disabled is atomic
 * (nom/sched.h); a contended lock blocks the thread, never the core.
 *
 * The owner word holds the owning thread with bit 0 set while a thread may wait for it
 * (MUTEX_CONTENDED). An uncontended lock and unlock is then one compare-and-swap each, with
 * preemption left on: memcached takes and drops a dozen or more mutexes per request, and the
 * preempt_off/preempt_on pair, the owner and type checks and the frame around them were about
 * 65 instructions a pair (issue 16's profile). Everything else (a held mutex, recursion, error
 * checking, waiters) takes the slow path under preempt_off, as before. A waiter sets the bit
 * before it sleeps, so an owner whose swap from "me" to NULL fails knows to wake someone. */
#include <errno.h>
#include <pthread.h>
#include <nom/sched.h>
#include <nom/time.h>
#include "libnom.h"

static struct nom_thread *self(void) { return sched_lock_owner(); }

int pthread_mutexattr_init(pthread_mutexattr_t *a)
{
    *a = (pthread_mutexattr_t){ 1, PTHREAD_MUTEX_DEFAULT, PTHREAD_PROCESS_PRIVATE, 0 };
    return 0;
}
int pthread_mutexattr_destroy(pthread_mutexattr_t *a) { a->is_initialized = 0; return 0; }
int pthread_mutexattr_settype(pthread_mutexattr_t *a, int type)
{
    if (type < PTHREAD_MUTEX_NORMAL || type > PTHREAD_MUTEX_ERRORCHECK)
        return EINVAL;
    a->type = type;
    return 0;
}
int pthread_mutexattr_gettype(const pthread_mutexattr_t *a, int *type) { *type = a->type; return 0; }
int pthread_mutexattr_setpshared(pthread_mutexattr_t *a, int pshared)
{
    /* One address space per application: there is nothing to share a mutex with. */
    return pshared == PTHREAD_PROCESS_PRIVATE ? (a->pshared = pshared, 0) : ENOTSUP;
}

int pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *a)
{
    *m = (pthread_mutex_t){ 0, 0, a ? a->type : PTHREAD_MUTEX_NORMAL, NOM_WAITQ_INIT };
    return 0;
}

int pthread_mutex_destroy(pthread_mutex_t *m) { return mutex_owner(m) ? EBUSY : 0; }

/* The uncontended case: m was free and is now the caller's. Any type: a free mutex is taken
 * the same way by all three; the count is the owner's alone, so it follows the swap. */
static inline int mutex_take_free(pthread_mutex_t *m, struct nom_thread *me)
{
    struct nom_thread *free_word = NULL;
    if (!__atomic_compare_exchange_n(&m->owner, &free_word, me, 0, __ATOMIC_ACQUIRE,
                                     __ATOMIC_RELAXED))
        return 0;
    m->count = 1;
    return 1;
}

/* Takes m for me, waiting until deadline_tsc (0: forever): the slow path. */
static int mutex_acquire(pthread_mutex_t *m, struct nom_thread *me, uint64_t deadline_tsc,
                         int try)
{
    int ret = 0;
    preempt_off();
    if (mutex_owner(m) == me && m->type == PTHREAD_MUTEX_RECURSIVE) {
        m->count++;
    } else if (mutex_owner(m) == me && m->type == PTHREAD_MUTEX_ERRORCHECK) {
        ret = EDEADLK;
    } else {
        while (mutex_owner(m) && ret == 0) {
            if (try) {
                ret = EBUSY;
                break;
            }
            /* Preemption is off: no swap of the owner runs between this read and write. */
            m->owner = (struct nom_thread *)((uintptr_t)m->owner | MUTEX_CONTENDED);
            ret = nom_waitq_wait(&m->waiters, deadline_tsc) ? ETIMEDOUT : 0;
        }
        if (ret == 0) {
            /* Others still queued keep the bit, so that this owner's unlock wakes one. */
            m->owner = (struct nom_thread *)((uintptr_t)me |
                                             (m->waiters.head ? MUTEX_CONTENDED : 0));
            m->count = 1;
        }
    }
    preempt_on();
    return ret;
}

int pthread_mutex_lock(pthread_mutex_t *m)
{
    struct nom_thread *me = self();
    return mutex_take_free(m, me) ? 0 : mutex_acquire(m, me, 0, 0);
}
int pthread_mutex_trylock(pthread_mutex_t *m)
{
    struct nom_thread *me = self();
    return mutex_take_free(m, me) ? 0 : mutex_acquire(m, me, 0, 1);
}

/* Absolute CLOCK_REALTIME timespec to a TSC deadline (cond.c shares it). */
uint64_t nom_abstime_to_tsc(const struct timespec *abstime, clockid_t clock)
{
    struct timespec now;
    clock_gettime(clock, &now);
    int64_t ns = (int64_t)(abstime->tv_sec - now.tv_sec) * 1000000000ll +
                 (abstime->tv_nsec - now.tv_nsec);
    uint64_t t = nom_tsc();
    return ns <= 0 ? t : t + nom_ns_to_tsc((uint64_t)ns);
}

int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abstime)
{
    if (abstime->tv_nsec < 0 || abstime->tv_nsec >= 1000000000l)
        return EINVAL;
    struct nom_thread *me = self();
    if (mutex_take_free(m, me)) /* before the clock is read: most locks are free */
        return 0;
    return mutex_acquire(m, me, nom_abstime_to_tsc(abstime, CLOCK_REALTIME), 0);
}

/* The slow path: recursion, error checking, waiters, or a caller (me) that does not own m. */
static int mutex_release(pthread_mutex_t *m, struct nom_thread *me)
{
    int ret = 0;
    preempt_off();
    if (mutex_owner(m) != me) {
        /* POSIX leaves this undefined for normal mutexes; refusing is the safe reading. */
        ret = EPERM;
    } else if (--m->count == 0) {
        m->owner = NULL;
        if (m->waiters.head)
            nom_waitq_wake_one(&m->waiters);
    }
    preempt_on();
    return ret;
}

int pthread_mutex_unlock(pthread_mutex_t *m)
{
    /* count is read before the swap: it is only the owner's to change, and if the caller
     * is not the owner, the swap fails whatever was read. */
    struct nom_thread *me = self(), *expected = me;
    if (m->count == 1 && __atomic_compare_exchange_n(&m->owner, &expected, NULL, 0,
                                                     __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {
        sched_soft_timer_check();
        return 0;
    }
    int ret = mutex_release(m, me);
    sched_soft_timer_check();
    return ret;
}

/* Spin locks: a holder on the same core can only be waited out by yielding. */
int pthread_spin_init(pthread_spinlock_t *s, int pshared) { (void)pshared; *s = 0; return 0; }
int pthread_spin_destroy(pthread_spinlock_t *s) { return *s ? EBUSY : 0; }
int pthread_spin_trylock(pthread_spinlock_t *s)
{
    return __atomic_exchange_n(s, 1, __ATOMIC_ACQUIRE) ? EBUSY : 0;
}
int pthread_spin_lock(pthread_spinlock_t *s)
{
    while (__atomic_exchange_n(s, 1, __ATOMIC_ACQUIRE))
        nom_yield();
    return 0;
}
int pthread_spin_unlock(pthread_spinlock_t *s)
{
    __atomic_store_n(s, 0, __ATOMIC_RELEASE);
    return 0;
}

int pthread_barrier_init(pthread_barrier_t *b, const pthread_barrierattr_t *a, unsigned count)
{
    (void)a;
    if (count == 0)
        return EINVAL;
    *b = (pthread_barrier_t){ count, 0, 0, NOM_WAITQ_INIT };
    return 0;
}
int pthread_barrier_destroy(pthread_barrier_t *b) { return b->arrived ? EBUSY : 0; }
int pthread_barrier_wait(pthread_barrier_t *b)
{
    int ret = 0;
    preempt_off();
    unsigned long cycle = b->cycle;
    if (++b->arrived == b->count) {
        b->arrived = 0;
        b->cycle++;
        nom_waitq_wake_all(&b->waiters);
        ret = PTHREAD_BARRIER_SERIAL_THREAD;
    } else {
        while (b->cycle == cycle)
            nom_waitq_wait(&b->waiters, 0);
    }
    preempt_on();
    return ret;
}
