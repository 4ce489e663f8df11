/* newlib_locks.c: newlib's retargetable locks (stdio, malloc, atexit, env, time zone) as
 * user-thread mutexes, so a thread waiting for stdout blocks itself, not the core. Defining
 * every symbol of newlib's libc/misc/lock.c here keeps its single-threaded defaults out.
 * Preemption stays disabled while one is held: a thread is then never stopped inside malloc,
 * so scheduler-context callbacks (drivers, the network stack) can always malloc without
 * finding the lock taken. */
#include <stdlib.h>
#include <sys/lock.h>
#include <pthread.h>
#include <nom/sched.h>
#include "libnom.h"

struct __lock {
    pthread_mutex_t m;
};

#define RECURSIVE { PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP }
#define NORMAL { PTHREAD_MUTEX_INITIALIZER }
struct __lock __lock___sinit_recursive_mutex = RECURSIVE;
struct __lock __lock___sfp_recursive_mutex = RECURSIVE;
struct __lock __lock___atexit_recursive_mutex = RECURSIVE;
struct __lock __lock___at_quick_exit_mutex = NORMAL;
struct __lock __lock___malloc_recursive_mutex = RECURSIVE;
struct __lock __lock___env_recursive_mutex = RECURSIVE;
struct __lock __lock___tz_mutex = NORMAL;
struct __lock __lock___dd_hash_mutex = NORMAL;
struct __lock __lock___arc4random_mutex = NORMAL;

static void lock_new(_LOCK_T *lock, int type)
{
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, type);
    *lock = malloc(sizeof **lock);
    if (*lock)
        pthread_mutex_init(&(*lock)->m, &a);
}

void __retarget_lock_init(_LOCK_T *lock) { lock_new(lock, PTHREAD_MUTEX_NORMAL); }
void __retarget_lock_init_recursive(_LOCK_T *lock) { lock_new(lock, PTHREAD_MUTEX_RECURSIVE); }
void __retarget_lock_close(_LOCK_T lock) { free(lock); }
void __retarget_lock_close_recursive(_LOCK_T lock) { free(lock); }
static void lock_take(_LOCK_T lock)
{
    preempt_off();
    if (lock)
        pthread_mutex_lock(&lock->m);
}

static int lock_try(_LOCK_T lock)
{
    preempt_off();
    int r = lock ? pthread_mutex_trylock(&lock->m) : 0;
    if (r != 0)
        preempt_on();
    return r;
}

static void lock_give(_LOCK_T lock)
{
    if (lock)
        pthread_mutex_unlock(&lock->m);
    preempt_on();
}

void __retarget_lock_acquire(_LOCK_T lock) { lock_take(lock); }
void __retarget_lock_acquire_recursive(_LOCK_T lock) { lock_take(lock); }
int __retarget_lock_try_acquire(_LOCK_T lock) { return lock_try(lock); }
int __retarget_lock_try_acquire_recursive(_LOCK_T lock) { return lock_try(lock); }
void __retarget_lock_release(_LOCK_T lock) { lock_give(lock); }
void __retarget_lock_release_recursive(_LOCK_T lock) { lock_give(lock); }
