/*
 * runq.h: the run queue, a FIFO of runnable threads linked through the threads themselves
 * (no allocation, O(1) push and pop). Pure code, unit-tested on the host (tests/host).
 * One queue per core today; with several cores each core keeps its own and steals from the
 * others' tails under their lock (the queue holds no global state, so that is a local change).
 */
#ifndef NOM_RUNQ_H
#define NOM_RUNQ_H

#include <stddef.h>

struct nom_runq_link {
    struct nom_runq_link *next;
};

struct nom_runq {
    struct nom_runq_link *head, *tail;
    size_t len;
};

static inline void runq_push(struct nom_runq *q, struct nom_runq_link *l)
{
    l->next = NULL;
    if (q->tail)
        q->tail->next = l;
    else
        q->head = l;
    q->tail = l;
    q->len++;
}

static inline struct nom_runq_link *runq_pop(struct nom_runq *q)
{
    struct nom_runq_link *l = q->head;
    if (!l)
        return NULL;
    q->head = l->next;
    if (!q->head)
        q->tail = NULL;
    q->len--;
    l->next = NULL;
    return l;
}

static inline int runq_empty(const struct nom_runq *q)
{
    return q->head == NULL;
}

#endif /* NOM_RUNQ_H */
