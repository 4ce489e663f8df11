/* thread.c: user-level threads behind the POSIX thread lifecycle (create, join, detach, exit,
 * self, names, attributes). Each thread has its own stack reservation that grows on demand
 * (fault.c), its own newlib struct _reent (per-thread errno, strtok, rand state; newlib's
 * __getreent() answers it), and its thread-specific values (tls.c). */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <pthread.h>
#include <nom/syscall.h>
#include "libnom.h"

#define STACK_GUARD (16 * NOM_PAGE_SIZE) /* unmapped below each stack: frames up to 64 KiB
                                        * cannot step over it into the stack below */
#define STACK_INITIAL_PAGES 4
#define STACK_CACHE 64                  /* exited threads' stacks kept mapped for reuse */
#define STACK_CACHE_MAX_MAPPED (256u << 10)

static struct nom_thread main_thread;
static struct nom_thread *all_threads; /* every thread not yet reclaimed */
static struct nom_thread *reap_list;   /* detached threads that exited, to free */
static unsigned next_id = 1, live_threads = 1;
/* Mapping and unmapping are the expensive part of a thread's life (two system calls that
 * change page tables), so stacks of exited threads are kept, mapped, for the next thread
 * with the same reservation size. */
static struct stack_region stack_cache[STACK_CACHE];
static unsigned stack_cached;

void tls_run_destructors(struct nom_thread *t); /* tls.c */

struct _reent *__getreent(void)
{
    struct nom_thread *t = nom_cpu_self()->current;
    return t ? t->reent : _impure_ptr;
}

static void all_link(struct nom_thread *t)
{
    t->all_prev = NULL;
    t->all_next = all_threads;
    if (all_threads)
        all_threads->all_prev = t;
    all_threads = t;
}

static void all_unlink(struct nom_thread *t)
{
    if (t->all_prev)
        t->all_prev->all_next = t->all_next;
    else
        all_threads = t->all_next;
    if (t->all_next)
        t->all_next->all_prev = t->all_prev;
}

static int stack_create(struct stack_region *s, size_t bytes);

/* The initial context becomes thread 1, "main". It leaves the kernel-made start-up stack
 * (NOM_STACK_PAGES below NOM_STACK_TOP, above the bulletin board, where NOM_SYS_MEM_MAP cannot
 * add pages) for a reservation in the stacks arena that grows on demand like any thread's. */
void thread_start_main(void (*fn)(void *), void *arg)
{
    struct nom_thread *t = &main_thread;
    t->id = next_id++;
    strcpy(t->name, "main");
    t->main = 1;
    t->reent = _impure_ptr;
    if (stack_create(&t->stack, NOM_MAIN_STACK_MAX + STACK_GUARD) != 0)
        nom_panic("no memory for the main thread's stack");
    if (tls_block_size()) { /* straight from the heap: no locks exist yet */
        t->tls_mem = sbrk((ptrdiff_t)tls_block_size());
        if (t->tls_mem == (void *)-1)
            nom_panic("no memory for the main thread's TLS block");
        t->tp = tls_block_init(t->tls_mem);
        tls_activate(t->tp);
    }
    all_link(t);
    sched_init(t);
    nom_call_on_stack(fn, arg, t->stack.top);
}

struct nom_thread *thread_by_stack_addr(uintptr_t addr)
{
    for (struct nom_thread *t = all_threads; t; t = t->all_next)
        if (addr >= t->stack.base && addr < t->stack.top)
            return t;
    return NULL;
}

static size_t stack_reservation(const pthread_attr_t *attr)
{
    size_t size = attr && attr->stacksize ? attr->stacksize : NOM_STACK_DEFAULT;
    return ((size + NOM_PAGE_SIZE - 1) & ~(NOM_PAGE_SIZE - 1)) + STACK_GUARD;
}

static int stack_create(struct stack_region *s, size_t bytes)
{
    uintptr_t base = vm_reserve(VM_STACKS, bytes);
    if (!base)
        return -1;
    s->base = base;
    s->top = base + bytes;
    s->guard = STACK_GUARD;
    s->mapped_low = s->top;
    if (stack_ensure_mapped(s, s->top - STACK_INITIAL_PAGES * NOM_PAGE_SIZE) != 0) {
        vm_release(VM_STACKS, base, bytes);
        return -1;
    }
    return 0;
}

static int stack_get(struct stack_region *s, size_t bytes)
{
    preempt_off();
    for (unsigned i = 0; i < stack_cached; i++) {
        if (stack_cache[i].top - stack_cache[i].base == bytes) {
            *s = stack_cache[i];
            stack_cache[i] = stack_cache[--stack_cached];
            preempt_on();
            return 0;
        }
    }
    preempt_on();
    return stack_create(s, bytes);
}

static void stack_put(struct stack_region *s)
{
    preempt_off();
    if (stack_cached < STACK_CACHE && s->top - s->mapped_low <= STACK_CACHE_MAX_MAPPED) {
        stack_cache[stack_cached++] = *s;
        preempt_on();
        return;
    }
    preempt_on();
    nom_sys_mem_unmap(s->mapped_low, (s->top - s->mapped_low) / NOM_PAGE_SIZE);
    vm_release(VM_STACKS, s->base, s->top - s->base);
}

/* Frees what an exited thread held. Thread context (free() takes the malloc lock). */
static void thread_free(struct nom_thread *t)
{
    preempt_off();
    all_unlink(t);
    preempt_on();
    _reclaim_reent(t->reent);
    free(t->reent);
    free(t->tls_mem);
    stack_put(&t->stack);
    free(t);
}

static void reap_detached(void)
{
    preempt_off();
    struct nom_thread *list = reap_list;
    reap_list = NULL;
    preempt_on();
    while (list) {
        struct nom_thread *next = list->reap_next;
        thread_free(list);
        list = next;
    }
}

/* The new thread's stack, as nom_switch expects to pop it: x87 control word and MXCSR
 * (defaults), six callee-saved registers, then the return address. */
static void stack_prime(struct nom_thread *t)
{
    uint64_t *sp = (uint64_t *)(t->stack.top - 64);
    *--sp = (uint64_t)nom_thread_trampoline;
    for (int i = 0; i < 6; i++)
        *--sp = 0;
    *--sp = 0x1f80;  /* MXCSR: all exceptions masked */
    *--sp = 0x037f;  /* x87 control word */
    t->saved_rsp = (uint64_t)sp;
}

int pthread_create(pthread_t *out, const pthread_attr_t *attr, void *(*start)(void *), void *arg)
{
    reap_detached();
    struct nom_thread *t = calloc(1, sizeof *t);
    struct _reent *r = malloc(sizeof *r);
    void *tls = tls_block_size() ? malloc(tls_block_size()) : NULL;
    if (!t || !r || (tls_block_size() && !tls) ||
        stack_get(&t->stack, stack_reservation(attr)) != 0) {
        free(t);
        free(r);
        free(tls);
        return EAGAIN;
    }
    t->tls_mem = tls;
    t->tp = tls_block_init(tls);
    _REENT_INIT_PTR(r);
    t->reent = r;
    t->start = start;
    t->arg = arg;
    t->detached = attr && attr->detachstate == PTHREAD_CREATE_DETACHED;
    t->preempt_saved = 1; /* it starts inside sched_schedule's critical section */
    stack_prime(t);
    preempt_off();
    t->id = next_id++;
    live_threads++;
    all_link(t);
    t->state = T_BLOCKED;
    sched_make_runnable(t);
    preempt_on();
    *out = t;
    return 0;
}

void thread_entry(void)
{
    struct nom_thread *t = nom_cpu_self()->current;
    sched_thread_start();
    pthread_exit(t->start(t->arg));
}

void thread_exit_now(void *value)
{
    struct nom_thread *t = nom_cpu_self()->current;
    preempt_off();
    t->retval = value;
    if (--live_threads == 0)
        exit(0); /* POSIX: the process ends with its last thread */
    nom_timer_cancel(&t->sleep_timer); /* a last wait's, left armed (sched.c) */
    t->state = T_ZOMBIE;
    if (t->detached) {
        t->reap_next = reap_list;
        reap_list = t;
    }
    nom_waitq_wake_all(&t->join_wq);
    sched_schedule();
    nom_panic("a zombie thread was scheduled");
}

void nom_cleanup_push(struct nom_cleanup *c, void (*fn)(void *), void *arg)
{
    struct nom_thread *t = nom_cpu_self()->current;
    *c = (struct nom_cleanup){ fn, arg, t->cleanups };
    t->cleanups = c;
}

void nom_cleanup_pop(struct nom_cleanup *c, int execute)
{
    nom_cpu_self()->current->cleanups = c->prev;
    if (execute)
        c->fn(c->arg);
}

void pthread_exit(void *value)
{
    struct nom_thread *t = nom_cpu_self()->current;
    while (t->cleanups)
        nom_cleanup_pop(t->cleanups, 1);
    tls_run_destructors(t);
    thread_exit_now(value);
}

int pthread_join(pthread_t t, void **value)
{
    struct nom_thread *self = nom_cpu_self()->current;
    if (t == self)
        return EDEADLK;
    preempt_off();
    if (t->detached || t->joined) {
        preempt_on();
        return EINVAL;
    }
    t->joined = 1;
    while (t->state != T_ZOMBIE)
        nom_waitq_wait(&t->join_wq, 0);
    preempt_on();
    if (value)
        *value = t->retval;
    if (!t->main)
        thread_free(t);
    return 0;
}

int pthread_detach(pthread_t t)
{
    int ret = 0;
    preempt_off();
    if (t->detached || t->joined)
        ret = EINVAL;
    else if (t->state == T_ZOMBIE && !t->main) {
        t->joined = 1; /* exited already: free it here */
    } else
        t->detached = 1;
    preempt_on();
    if (ret == 0 && t->joined)
        thread_free(t);
    return ret;
}

pthread_t pthread_self(void) { return nom_cpu_self()->current; }
int pthread_equal(pthread_t a, pthread_t b) { return a == b; }
int pthread_yield(void) { nom_yield(); return 0; }

int pthread_setname_np(pthread_t t, const char *name)
{
    if (strlen(name) >= sizeof t->name)
        return ERANGE;
    strcpy(t->name, name);
    return 0;
}

int pthread_getname_np(pthread_t t, char *name, size_t len)
{
    if (strlen(t->name) >= len)
        return ERANGE;
    strcpy(name, t->name);
    return 0;
}

/* No cancellation points exist on nom (no pthread_cancel); the state is only recorded. */
int pthread_setcancelstate(int state, int *old)
{
    if (old)
        *old = PTHREAD_CANCEL_ENABLE;
    return state == PTHREAD_CANCEL_ENABLE || state == PTHREAD_CANCEL_DISABLE ? 0 : EINVAL;
}

/* nom has no signals (paper 5): masks have nothing to mask. */
int pthread_sigmask(int how, const __sigset_t *set, __sigset_t *old)
{
    (void)how;
    (void)set;
    if (old)
        *old = 0;
    return 0;
}

int pthread_kill(pthread_t t, int sig)
{
    (void)t;
    return sig == 0 ? 0 : EINVAL;
}
