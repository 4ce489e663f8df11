/* cond.c: condition variables and reader/writer locks over libnom's wait queues. Releasing
 * the mutex and starting to wait happen with preemption disabled, so no wake-up is lost. */
#include <errno.h>
#include <pthread.h>
#include <nom/sched.h>
#include <nom/time.h>
#include "libnom.h"

uint64_t nom_abstime_to_tsc(const struct timespec *abstime, clockid_t clock); /* mutex.c */

int pthread_condattr_init(pthread_condattr_t *a)
{
    *a = (pthread_condattr_t){ 1, CLOCK_REALTIME, PTHREAD_PROCESS_PRIVATE };
    return 0;
}
int pthread_condattr_destroy(pthread_condattr_t *a) { a->is_initialized = 0; return 0; }
int pthread_condattr_setclock(pthread_condattr_t *a, clockid_t clock)
{
    if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)
        return EINVAL;
    a->clock = clock;
    return 0;
}
int pthread_condattr_getclock(const pthread_condattr_t *a, clockid_t *clock)
{
    *clock = a->clock;
    return 0;
}
int pthread_condattr_setpshared(pthread_condattr_t *a, int pshared)
{
    return pshared == PTHREAD_PROCESS_PRIVATE ? (a->pshared = pshared, 0) : ENOTSUP;
}

int pthread_cond_init(pthread_cond_t *c, const pthread_condattr_t *a)
{
    /* 0 stands for CLOCK_REALTIME so that PTHREAD_COND_INITIALIZER (zeros) is the default. */
    *c = (pthread_cond_t){ NOM_WAITQ_INIT, a && a->clock == CLOCK_MONOTONIC ? CLOCK_MONOTONIC : 0 };
    return 0;
}
int pthread_cond_destroy(pthread_cond_t *c) { return c->waiters.head ? EBUSY : 0; }

static int cond_wait(pthread_cond_t *c, pthread_mutex_t *m, uint64_t deadline_tsc)
{
    if (mutex_owner(m) != sched_lock_owner())
        return EPERM;
    preempt_off();
    unsigned depth = m->count;
    m->count = 1;
    pthread_mutex_unlock(m);
    int r = nom_waitq_wait(&c->waiters, deadline_tsc);
    preempt_on();
    pthread_mutex_lock(m);
    m->count = depth;
    return r ? ETIMEDOUT : 0;
}

int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m) { return cond_wait(c, m, 0); }

int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *abstime)
{
    if (abstime->tv_nsec < 0 || abstime->tv_nsec >= 1000000000l)
        return EINVAL;
    clockid_t clock = c->clock == CLOCK_MONOTONIC ? CLOCK_MONOTONIC : CLOCK_REALTIME;
    return cond_wait(c, m, nom_abstime_to_tsc(abstime, clock));
}

int pthread_cond_signal(pthread_cond_t *c)
{
    nom_waitq_wake_one(&c->waiters);
    return 0;
}

int pthread_cond_broadcast(pthread_cond_t *c)
{
    nom_waitq_wake_all(&c->waiters);
    return 0;
}

/* Reader/writer locks prefer writers: new readers wait while a writer waits. */
int pthread_rwlockattr_init(pthread_rwlockattr_t *a) { *a = (pthread_rwlockattr_t){ 1, 0 }; return 0; }
int pthread_rwlockattr_destroy(pthread_rwlockattr_t *a) { a->is_initialized = 0; return 0; }
int pthread_rwlock_init(pthread_rwlock_t *rw, const pthread_rwlockattr_t *a)
{
    (void)a;
    *rw = (pthread_rwlock_t){ 0, 0, 0, NOM_WAITQ_INIT };
    return 0;
}
int pthread_rwlock_destroy(pthread_rwlock_t *rw) { return rw->readers || rw->writer ? EBUSY : 0; }

static int rw_rdlock(pthread_rwlock_t *rw, int try)
{
    int ret = 0;
    preempt_off();
    if (rw->writer == sched_lock_owner())
        ret = EDEADLK;
    while (ret == 0 && (rw->writer || rw->writers_waiting)) {
        if (try)
            ret = EBUSY;
        else
            nom_waitq_wait(&rw->waiters, 0);
    }
    if (ret == 0)
        rw->readers++;
    preempt_on();
    return ret;
}

static int rw_wrlock(pthread_rwlock_t *rw, int try)
{
    struct nom_thread *me = sched_lock_owner();
    int ret = 0;
    preempt_off();
    if (rw->writer == me)
        ret = EDEADLK;
    else if (try && (rw->writer || rw->readers))
        ret = EBUSY;
    if (ret == 0) {
        rw->writers_waiting++;
        while (rw->writer || rw->readers)
            nom_waitq_wait(&rw->waiters, 0);
        rw->writers_waiting--;
        rw->writer = me;
    }
    preempt_on();
    return ret;
}

int pthread_rwlock_rdlock(pthread_rwlock_t *rw) { return rw_rdlock(rw, 0); }
int pthread_rwlock_tryrdlock(pthread_rwlock_t *rw) { return rw_rdlock(rw, 1); }
int pthread_rwlock_wrlock(pthread_rwlock_t *rw) { return rw_wrlock(rw, 0); }
int pthread_rwlock_trywrlock(pthread_rwlock_t *rw) { return rw_wrlock(rw, 1); }

int pthread_rwlock_unlock(pthread_rwlock_t *rw)
{
    int ret = 0;
    preempt_off();
    if (rw->writer == sched_lock_owner())
        rw->writer = NULL;
    else if (rw->readers)
        rw->readers--;
    else
        ret = EPERM;
    if (ret == 0 && !rw->writer && rw->readers == 0)
        nom_waitq_wake_all(&rw->waiters);
    preempt_on();
    return ret;
}
