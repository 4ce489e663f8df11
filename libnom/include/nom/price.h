/*
 * nom/price.h: the bandwidth price for applications (paper 3.7; DESIGN.md "priced", "IPC").
 *
 * priced publishes the provider's bandwidth price on the bulletin board (price slot 0,
 * resource NOM_RES_BANDWIDTH, unit NOM_UNIT_GBIT, micro-dollars) and the kernel then sends
 * NOM_NOTIFY_PRICE to every application whose board row says subscribe_prices. This library
 * spares applications reading the board by hand.
 *
 * Contract.
 *  - nom_price_bandwidth() may be called at any time, from any context (thread, scheduler
 *    callback, even an upcall): it copies the first bandwidth/Gbit slot under the board's
 *    seqlock (nom/bb.h), so price, timestamp and sequence always belong to one publication.
 *    No system call, never blocks. Subscribing is not needed to read.
 *  - nom_price_subscribe() sets subscribe_prices in the application's board row, keeping the
 *    row's other fields (batching delay, price seen, profit rate) as they are on the board,
 *    and installs the library as libnom's notification handler (nom_notify_handler_set: there
 *    is one per application, so an application that needs notification bits of its own
 *    cannot use this library's subscription as it stands). Call it from a thread, once.
 *  - After subscribing, every publication (a price change seen by priced) makes the library
 *    (1) increment the counter nom_price_notifications() returns, (2) wake the threads in
 *    nom_price_wait(), (3) call the on_change callback, in libnom's scheduler context
 *    (nom/sched.h: it must not block and should not use stdio). Several publications close
 *    together may arrive as one notification: the sequence tells how many there were.
 *  - A later subscribe call replaces the callback. Nothing here unsubscribes.
 */
#ifndef NOM_PRICE_H
#define NOM_PRICE_H

#include <stdint.h>
#include <nom/abi.h>

struct nom_price {
    double usd_per_gbit;      /* the price, in $/Gbit */
    int64_t micro_per_gbit;   /* the same as the board stores it (abi.h: micro-dollars) */
    uint64_t timestamp_ns;    /* when the provider's price took effect (Unix ns), 0 unknown */
    uint64_t sequence;        /* the board slot's publication count: grows with every change */
};

/* Copies the current bandwidth price into *out: 0, or -ENOENT while none is published. */
int nom_price_bandwidth(struct nom_price *out);

/* The same from a copy of the board's price slots (host tests; n slots). 0 or -ENOENT. */
int nom_price_from_slots(const struct nom_bb_price *slots, unsigned n, struct nom_price *out);

/* Subscribes to price notifications; on_change(price, arg) (may be NULL) runs in scheduler
 * context after each one, with the price as published then (or not at all if the slot is
 * empty). 0, or -EINVAL if the kernel refused the board report (it cannot, for a running
 * application: the report lives in the library's own memory). */
int nom_price_subscribe(void (*on_change)(const struct nom_price *now, void *arg), void *arg);

/* Price notifications received since nom_price_subscribe(): compare with an earlier value
 * to learn, without any system call, whether the price changed. */
uint64_t nom_price_notifications(void);

/* Blocks the calling thread until the published price's sequence exceeds after_sequence, or
 * the TSC reaches deadline_tsc (0: no deadline); then copies the price into *out. Thread
 * context, after nom_price_subscribe() (else only the deadline wakes it). 0, or -ETIMEDOUT. */
int nom_price_wait(uint64_t after_sequence, uint64_t deadline_tsc, struct nom_price *out);

#endif /* NOM_PRICE_H */
