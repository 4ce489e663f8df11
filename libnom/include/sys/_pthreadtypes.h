/*
 * libnom's <sys/_pthreadtypes.h> (included by <sys/types.h>): the pthread object types of nom's
 * user-level threads, replacing newlib's (which are RTEMS object ids). Every object is valid
 * when zeroed or set with its PTHREAD_*_INITIALIZER, and must not be copied while in use.
 */
#ifndef NOM_SYS_PTHREADTYPES_H
#define NOM_SYS_PTHREADTYPES_H

#include <sys/_types.h>
#include <sys/sched.h>
#include <nom/waitq.h>

struct nom_thread;
typedef struct nom_thread *pthread_t;

#define PTHREAD_SCOPE_PROCESS 0
#define PTHREAD_SCOPE_SYSTEM 1
#define PTHREAD_INHERIT_SCHED 1
#define PTHREAD_EXPLICIT_SCHED 2
#define PTHREAD_CREATE_DETACHED 0
#define PTHREAD_CREATE_JOINABLE 1
#define PTHREAD_PROCESS_PRIVATE 0
#define PTHREAD_PROCESS_SHARED 1
#define PTHREAD_PRIO_NONE 0
#define PTHREAD_PRIO_INHERIT 1
#define PTHREAD_PRIO_PROTECT 2
#define PTHREAD_MUTEX_NORMAL 0
#define PTHREAD_MUTEX_RECURSIVE 1
#define PTHREAD_MUTEX_ERRORCHECK 2
#define PTHREAD_MUTEX_DEFAULT PTHREAD_MUTEX_NORMAL
#define PTHREAD_STACK_MIN 16384

typedef struct {
    int is_initialized;
    int detachstate;
    __size_t stacksize;
    __size_t guardsize;
    void *stackaddr;
    int inheritsched;
    int schedpolicy;
    int contentionscope;
    struct sched_param schedparam;
} pthread_attr_t;

typedef struct {
    struct nom_thread *owner;
    unsigned count;       /* recursion depth for PTHREAD_MUTEX_RECURSIVE */
    int type;             /* PTHREAD_MUTEX_* */
    struct nom_waitq waiters;
} pthread_mutex_t;

typedef struct {
    int is_initialized;
    int type;
    int pshared;
    int protocol;
} pthread_mutexattr_t;

typedef struct {
    struct nom_waitq waiters;
    __clockid_t clock;    /* 0: CLOCK_REALTIME (the default) */
} pthread_cond_t;

typedef struct {
    int is_initialized;
    __clockid_t clock;
    int pshared;
} pthread_condattr_t;

typedef unsigned pthread_key_t;

typedef struct {
    int state;            /* 0 not run, 1 running, 2 done */
} pthread_once_t;

typedef struct {
    unsigned readers;
    struct nom_thread *writer;
    unsigned writers_waiting;
    struct nom_waitq waiters;
} pthread_rwlock_t;

typedef struct {
    int is_initialized;
    int pshared;
} pthread_rwlockattr_t;

typedef volatile int pthread_spinlock_t;

typedef struct {
    unsigned count;
    unsigned arrived;
    unsigned long cycle;
    struct nom_waitq waiters;
} pthread_barrier_t;

typedef struct {
    int is_initialized;
    int pshared;
} pthread_barrierattr_t;

#endif /* NOM_SYS_PTHREADTYPES_H */
