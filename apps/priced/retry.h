/*
 * retry.h: priced's failure episodes and retry delays. Pure code, host-tested.
 *
 * An episode is a run of consecutive failed polls of one kind (unreachable, timeout, bad
 * answer, bad status, rejected price): priced reports it once, when it begins, and once when
 * a good poll ends it, instead of a console line per poll. After the k-th consecutive failure
 * the next poll waits period * 2^(k-1), at most max_backoff (exponential backoff, so a dead
 * provider is not hammered, yet one that comes back is seen within max_backoff).
 */
#ifndef PRICED_RETRY_H
#define PRICED_RETRY_H

#include <stdint.h>

struct retry {
    uint32_t period_ms, max_backoff_ms;
    unsigned failures; /* consecutive failed polls */
    int kind;          /* the current episode's kind; 0: no episode */
};

/* Starts with no failure: the next delay is the period. */
void retry_init(struct retry *r, uint32_t period_ms, uint32_t max_backoff_ms);
/* Records a failed poll of kind (non-zero); 1 if it begins an episode (the first failure
 * after a good poll, or a kind other than the episode's): the caller says so once. */
int retry_failed(struct retry *r, int kind);
/* Records a good poll; the number of consecutive failures it ends (0: none). */
unsigned retry_succeeded(struct retry *r);
/* Milliseconds from this poll's start to the next one. */
uint32_t retry_delay_ms(const struct retry *r);

#endif /* PRICED_RETRY_H */
