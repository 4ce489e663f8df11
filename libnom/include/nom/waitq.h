/*
 * nom/waitq.h: the wait-queue type (separate from nom/sched.h so that <pthread.h> can embed it
 * without pulling in the scheduler). The functions are declared in nom/sched.h.
 *
 * Contract: a struct nom_waitq is valid when zeroed (NOM_WAITQ_INIT), so it can sit in
 * statically initialized objects (PTHREAD_MUTEX_INITIALIZER). It must not be moved or copied
 * while threads wait on it.
 */
#ifndef NOM_WAITQ_H
#define NOM_WAITQ_H

struct nom_waiter;

struct nom_waitq {
    struct nom_waiter *head, *tail; /* FIFO of waiting threads */
};

#define NOM_WAITQ_INIT { 0, 0 }

#endif /* NOM_WAITQ_H */
