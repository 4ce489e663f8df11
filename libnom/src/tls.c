/* tls.c: thread-specific data (keys), pthread_once and thread attributes. */
#include <errno.h>
#include <pthread.h>
#include <nom/sched.h>
#include "libnom.h"

static void (*destructors[PTHREAD_KEYS_MAX])(void *);
static unsigned char key_used[PTHREAD_KEYS_MAX];

int pthread_key_create(pthread_key_t *key, void (*destructor)(void *))
{
    int ret = EAGAIN;
    preempt_off();
    for (unsigned k = 0; k < PTHREAD_KEYS_MAX; k++) {
        if (!key_used[k]) {
            key_used[k] = 1;
            destructors[k] = destructor;
            *key = k;
            ret = 0;
            break;
        }
    }
    preempt_on();
    return ret;
}

int pthread_key_delete(pthread_key_t key)
{
    if (key >= PTHREAD_KEYS_MAX || !key_used[key])
        return EINVAL;
    key_used[key] = 0;
    destructors[key] = NULL;
    return 0;
}

void *pthread_getspecific(pthread_key_t key)
{
    return key < PTHREAD_KEYS_MAX ? (void *)nom_cpu_self()->current->specific[key] : NULL;
}

int pthread_setspecific(pthread_key_t key, const void *value)
{
    if (key >= PTHREAD_KEYS_MAX || !key_used[key])
        return EINVAL;
    nom_cpu_self()->current->specific[key] = value;
    return 0;
}

/* POSIX: destructors run for non-NULL values, repeated while some are set again. */
void tls_run_destructors(struct nom_thread *t)
{
    for (int round = 0; round < PTHREAD_DESTRUCTOR_ITERATIONS; round++) {
        int ran = 0;
        for (unsigned k = 0; k < PTHREAD_KEYS_MAX; k++) {
            void *v = (void *)t->specific[k];
            if (v && key_used[k] && destructors[k]) {
                t->specific[k] = NULL;
                destructors[k](v);
                ran = 1;
            }
        }
        if (!ran)
            break;
    }
}

static struct nom_waitq once_wq;

int pthread_once(pthread_once_t *once, void (*fn)(void))
{
    preempt_off();
    while (once->state == 1)
        nom_waitq_wait(&once_wq, 0);
    if (once->state == 0) {
        once->state = 1;
        preempt_on();
        fn();
        preempt_off();
        once->state = 2;
        nom_waitq_wake_all(&once_wq);
    }
    preempt_on();
    return 0;
}

int pthread_attr_init(pthread_attr_t *a)
{
    *a = (pthread_attr_t){ .is_initialized = 1, .detachstate = PTHREAD_CREATE_JOINABLE,
                           .stacksize = NOM_STACK_DEFAULT, .guardsize = 16 * NOM_PAGE_SIZE,
                           .inheritsched = PTHREAD_INHERIT_SCHED,
                           .contentionscope = PTHREAD_SCOPE_PROCESS };
    return 0;
}
int pthread_attr_destroy(pthread_attr_t *a) { a->is_initialized = 0; return 0; }
int pthread_attr_setstacksize(pthread_attr_t *a, size_t size)
{
    if (size < PTHREAD_STACK_MIN)
        return EINVAL;
    a->stacksize = size;
    return 0;
}
int pthread_attr_getstacksize(const pthread_attr_t *a, size_t *size) { *size = a->stacksize; return 0; }
int pthread_attr_setdetachstate(pthread_attr_t *a, int state)
{
    if (state != PTHREAD_CREATE_DETACHED && state != PTHREAD_CREATE_JOINABLE)
        return EINVAL;
    a->detachstate = state;
    return 0;
}
int pthread_attr_getdetachstate(const pthread_attr_t *a, int *state) { *state = a->detachstate; return 0; }
/* The guard is always 64 KiB (thread.c); other sizes are recorded, not honoured. */
int pthread_attr_setguardsize(pthread_attr_t *a, size_t size) { a->guardsize = size; return 0; }
int pthread_attr_getguardsize(const pthread_attr_t *a, size_t *size) { *size = a->guardsize; return 0; }
int pthread_attr_setscope(pthread_attr_t *a, int scope)
{
    if (scope != PTHREAD_SCOPE_PROCESS && scope != PTHREAD_SCOPE_SYSTEM)
        return EINVAL;
    a->contentionscope = scope;
    return 0;
}
int pthread_attr_getscope(const pthread_attr_t *a, int *scope) { *scope = a->contentionscope; return 0; }
