/*
 * <pthread.h> for nom: POSIX threads as libnom's user-level threads (paper 3.3, 5: nom
 * supports pthreads via user-space threading). Implemented in src/thread.c, src/mutex.c,
 * src/cond.c, src/rwlock.c, src/tls.c.
 *
 * Contract beyond POSIX: threads run on the cores the application holds, scheduled by libnom
 * (nom/sched.h); a thread that blocks (mutex, condvar, I/O, sleep) yields its core, and one
 * that never blocks is preempted at the end of its time slice. Every function returns 0 or an
 * errno value (never sets errno): EINVAL for a bad argument, EAGAIN when out of memory for a
 * thread, EDEADLK / EPERM for mutex misuse as POSIX says, ETIMEDOUT for timed waits, EBUSY for
 * try-locks. Stacks are reservations that grow on demand up to the attribute's stack size
 * (default 8 MiB) above a 64 KiB unmapped guard; PTHREAD_STACK_MIN is 16 KiB. Signals do not
 * exist on nom: pthread_sigmask accepts and ignores masks, pthread_kill only accepts signal 0.
 */
#ifndef NOM_PTHREAD_H
#define NOM_PTHREAD_H

#include <sys/cdefs.h>
#include <sys/types.h>
#include <sys/_pthreadtypes.h>
#include <sched.h>
#include <time.h>

#define PTHREAD_MUTEX_INITIALIZER { 0, 0, PTHREAD_MUTEX_NORMAL, NOM_WAITQ_INIT }
#define PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP { 0, 0, PTHREAD_MUTEX_RECURSIVE, NOM_WAITQ_INIT }
#define PTHREAD_COND_INITIALIZER { NOM_WAITQ_INIT, 0 }
#define PTHREAD_RWLOCK_INITIALIZER { 0, 0, 0, NOM_WAITQ_INIT }
#define PTHREAD_ONCE_INIT { 0 }
#define PTHREAD_CANCELED ((void *)-1l)
#define PTHREAD_KEYS_MAX 128
#define PTHREAD_DESTRUCTOR_ITERATIONS 4
#define PTHREAD_BARRIER_SERIAL_THREAD (-1)

/* Cleanup handlers (POSIX): run by pthread_exit, or by pthread_cleanup_pop(1). The two macros
 * must pair up in one block, as POSIX requires. */
struct nom_cleanup {
    void (*fn)(void *);
    void *arg;
    struct nom_cleanup *prev;
};
#define pthread_cleanup_push(fn, arg) \
    { struct nom_cleanup __nom_cleanup; nom_cleanup_push(&__nom_cleanup, (fn), (arg));
#define pthread_cleanup_pop(execute) nom_cleanup_pop(&__nom_cleanup, (execute)); }

__BEGIN_DECLS
void nom_cleanup_push(struct nom_cleanup *c, void (*fn)(void *), void *arg);
void nom_cleanup_pop(struct nom_cleanup *c, int execute);
int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *),
                   void *arg);
int pthread_join(pthread_t thread, void **value);
int pthread_detach(pthread_t thread);
pthread_t pthread_self(void);
int pthread_equal(pthread_t a, pthread_t b);
void pthread_exit(void *value) __attribute__((noreturn));
int pthread_yield(void);
int pthread_setname_np(pthread_t thread, const char *name);
int pthread_getname_np(pthread_t thread, char *name, size_t len);
int pthread_setcancelstate(int state, int *oldstate);
int pthread_sigmask(int how, const __sigset_t *set, __sigset_t *oldset);
int pthread_kill(pthread_t thread, int sig);
#define PTHREAD_CANCEL_ENABLE 0
#define PTHREAD_CANCEL_DISABLE 1

int pthread_attr_init(pthread_attr_t *attr);
int pthread_attr_destroy(pthread_attr_t *attr);
int pthread_attr_setstacksize(pthread_attr_t *attr, size_t size);
int pthread_attr_getstacksize(const pthread_attr_t *attr, size_t *size);
int pthread_attr_setdetachstate(pthread_attr_t *attr, int state);
int pthread_attr_getdetachstate(const pthread_attr_t *attr, int *state);
int pthread_attr_setguardsize(pthread_attr_t *attr, size_t size);
int pthread_attr_getguardsize(const pthread_attr_t *attr, size_t *size);
int pthread_attr_setscope(pthread_attr_t *attr, int scope);
int pthread_attr_getscope(const pthread_attr_t *attr, int *scope);

int pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *attr);
int pthread_mutex_destroy(pthread_mutex_t *m);
int pthread_mutex_lock(pthread_mutex_t *m);
int pthread_mutex_trylock(pthread_mutex_t *m);
int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abstime);
int pthread_mutex_unlock(pthread_mutex_t *m);
int pthread_mutexattr_init(pthread_mutexattr_t *attr);
int pthread_mutexattr_destroy(pthread_mutexattr_t *attr);
int pthread_mutexattr_settype(pthread_mutexattr_t *attr, int type);
int pthread_mutexattr_gettype(const pthread_mutexattr_t *attr, int *type);
int pthread_mutexattr_setpshared(pthread_mutexattr_t *attr, int pshared);

int pthread_cond_init(pthread_cond_t *c, const pthread_condattr_t *attr);
int pthread_cond_destroy(pthread_cond_t *c);
int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m);
int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *abstime);
int pthread_cond_signal(pthread_cond_t *c);
int pthread_cond_broadcast(pthread_cond_t *c);
int pthread_condattr_init(pthread_condattr_t *attr);
int pthread_condattr_destroy(pthread_condattr_t *attr);
int pthread_condattr_setclock(pthread_condattr_t *attr, clockid_t clock);
int pthread_condattr_getclock(const pthread_condattr_t *attr, clockid_t *clock);
int pthread_condattr_setpshared(pthread_condattr_t *attr, int pshared);

int pthread_rwlock_init(pthread_rwlock_t *rw, const pthread_rwlockattr_t *attr);
int pthread_rwlock_destroy(pthread_rwlock_t *rw);
int pthread_rwlock_rdlock(pthread_rwlock_t *rw);
int pthread_rwlock_tryrdlock(pthread_rwlock_t *rw);
int pthread_rwlock_wrlock(pthread_rwlock_t *rw);
int pthread_rwlock_trywrlock(pthread_rwlock_t *rw);
int pthread_rwlock_unlock(pthread_rwlock_t *rw);
int pthread_rwlockattr_init(pthread_rwlockattr_t *attr);
int pthread_rwlockattr_destroy(pthread_rwlockattr_t *attr);

int pthread_spin_init(pthread_spinlock_t *s, int pshared);
int pthread_spin_destroy(pthread_spinlock_t *s);
int pthread_spin_lock(pthread_spinlock_t *s);
int pthread_spin_trylock(pthread_spinlock_t *s);
int pthread_spin_unlock(pthread_spinlock_t *s);

int pthread_barrier_init(pthread_barrier_t *b, const pthread_barrierattr_t *attr, unsigned count);
int pthread_barrier_destroy(pthread_barrier_t *b);
int pthread_barrier_wait(pthread_barrier_t *b);

int pthread_key_create(pthread_key_t *key, void (*destructor)(void *));
int pthread_key_delete(pthread_key_t key);
void *pthread_getspecific(pthread_key_t key);
int pthread_setspecific(pthread_key_t key, const void *value);
int pthread_once(pthread_once_t *once, void (*fn)(void));
__END_DECLS

#endif /* NOM_PTHREAD_H */
