/*
 * nom/price.h: the bandwidth price for applications (paper 3.7; DESIGN.md "priced", "IPC"),
 * and the provider's price text that priced turns into it (libnom/src/profit/).
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

#include <stddef.h>
#include <stdint.h>
#include <nom/abi.h>

struct nom_price {
    double usd_per_gbit;      /* the price, in $/Gbit */
    int64_t micro_per_gbit;   /* the same as the board stores it (abi.h: micro-dollars) */
    uint64_t timestamp_ns;    /* when the provider's price took effect (Unix ns), 0 unknown */
    uint64_t sequence;        /* the board slot's publication count: grows with every change */
    int stale;                /* 1: priced cannot confirm it now (abi.h NOM_PRICE_STALE) */
    uint64_t stale_since_tsc; /* with stale: the TSC of priced's last good answer */
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

/* ---- The provider's price text (pure code; priced and its host tests) ----------------------
 * tools/priceprovider's GET /price.txt, parsed strictly: one line of space-separated
 * `key=value` words,
 *     resource=bandwidth unit=$/Gbit price=1.000000 timestamp=1763790000.123456 sequence=3
 * with a final newline. resource, unit, price and sequence are required; timestamp (Unix
 * seconds) may be missing; unknown keys are skipped (a newer provider may add some); a key
 * given twice is an error. Prices are decimal dollars, converted exactly (no floating point)
 * to micro-dollars, rounded half up beyond six decimals, as the board stores them (abi.h). */
struct nom_price_quote {
    int64_t price_micro;   /* micro-dollars per Gbit, >= 0 */
    uint64_t timestamp_ns; /* when the provider's price took effect (Unix ns); 0: not given */
    uint64_t sequence;     /* the provider's: grows when the price in force changes */
};

/* Parses text[0, len) into *q. A price above max_price_micro, a negative price, a wrong
 * resource or unit, a malformed or missing field: -1 with a one-line reason in why. */
int nom_price_text_parse(const char *text, size_t len, int64_t max_price_micro,
                         struct nom_price_quote *q, char *why, size_t whylen);

/* Parses a non-negative decimal amount of dollars ("12", "0.5", "1.000000") into
 * micro-dollars, at most max; -1 if malformed, negative or too big. */
int nom_price_parse_micro(const char *s, size_t len, int64_t max, int64_t *out);

/* Formats micro-dollars as dollars with six decimals ("1.000000") into buf. */
const char *nom_price_format(int64_t micro, char *buf, size_t len);

#endif /* NOM_PRICE_H */
