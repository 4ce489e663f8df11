/* epset.h: the data structure under epoll (epoll.c), pure code unit-tested on the host.
 *
 * An epset is one epoll instance's interest list and ready list. Its items name a watched file
 * by (file, fd), as Linux does, and are found again by the file's key: the kind's priv, which
 * is what a kind names when its readiness gains a bit (nom_fd_event_on). One registry holds
 * every item of every set, chained by key, so such an event finds the items watching that file
 * without looking at any other: a wake-up costs the ready items, not the registered ones
 * (poll() scans every descriptor it is given, at every call and at every event while it waits).
 *
 * Readiness is never cached: an item on the ready list is only a candidate, and collecting
 * asks the file again (the caller's poll function). So the list may hold items that turned
 * out not ready; they leave it when collected, and come back at their file's next event.
 *   - level-triggered (default): an item found ready is reported and stays on the list, moved
 *     to its tail, so it is reported at every collect while it stays ready and ready items
 *     take turns when there are more than the caller takes at once;
 *   - EPOLLET: reported once per event, then off the list until the next event (an event is a
 *     readiness bit gained, nom/fd.h: more data on an already readable socket is not one);
 *   - EPOLLONESHOT: reported once, then disabled until modified (EPOLL_CTL_MOD).
 * Callers serialize (epoll.c holds preemption off around every call).
 */
#ifndef NOM_EPSET_H
#define NOM_EPSET_H

#include <stdbool.h>
#include <stdint.h>

#define EPSET_BUCKETS 1024 /* registry chains; a power of two */

/* Linux's <sys/epoll.h> values; the guest header has the same. Their low bits are poll()'s. */
#define EPSET_IN      0x001u
#define EPSET_PRI     0x002u
#define EPSET_OUT     0x004u
#define EPSET_ERR     0x008u
#define EPSET_HUP     0x010u
#define EPSET_RDHUP   0x2000u
#define EPSET_ONESHOT (1u << 30)
#define EPSET_ET      (1u << 31)

struct epset;

struct epset_item {
    struct epset_item *chain;                  /* the registry's chain of its key */
    struct epset_item *set_prev, *set_next;    /* its set's interest list */
    struct epset_item *ready_prev, *ready_next; /* its set's ready list, when on_ready */
    struct epset *set;
    const void *file, *key;
    int fd;
    bool on_ready, disabled;
    uint32_t events; /* interest (EPSET_IN, _OUT, ...) and the EPSET_ET / _ONESHOT modes */
    uint64_t data;   /* returned with each report (epoll_data_t) */
};

struct epset {
    struct epset_item *items;                  /* interest list */
    struct epset_item *ready_head, *ready_tail; /* candidates, oldest first */
    unsigned count;
};

struct epset_registry {
    struct epset_item *chain[EPSET_BUCKETS];
};

/* One report, laid out as Linux's x86-64 struct epoll_event (packed, 12 bytes), so that
 * epoll_wait collects straight into its caller's array. */
struct epset_report {
    uint32_t events;
    uint64_t data;
} __attribute__((__packed__));

/* The file's current readiness (poll bits), asked at every collect. */
typedef uint32_t (*epset_poll_fn)(const struct epset_item *item);

/* The item of (file, fd) in set, or NULL. */
struct epset_item *epset_find(const struct epset_registry *r, const struct epset *set,
                              const void *file, const void *key, int fd);
/* Adds (file, fd) to set with interest events and data, as a candidate (so a file already
 * ready is reported at the next collect, as Linux checks at EPOLL_CTL_ADD). Returns the item,
 * or NULL if out of memory. The caller checks first that it is not there (epset_find). */
struct epset_item *epset_add(struct epset_registry *r, struct epset *set, const void *file,
                             const void *key, int fd, uint32_t events, uint64_t data);
/* New interest and data; re-enables a one-shot item and makes it a candidate again. */
void epset_modify(struct epset_item *item, uint32_t events, uint64_t data);
/* Takes the item out of its set and the registry and frees it. */
void epset_remove(struct epset_registry *r, struct epset_item *item);
/* Every item of set, as epoll's close does. */
void epset_clear(struct epset_registry *r, struct epset *set);
/* The file was closed for good (its last descriptor): its items go, in every set. */
void epset_file_gone(struct epset_registry *r, const void *file, const void *key);
/* A readiness bit of key's file(s) may have been gained: their enabled items become
 * candidates. Calls woke(set, arg) once for each set that gained a candidate. */
void epset_notify(struct epset_registry *r, const void *key,
                  void (*woke)(struct epset *set, void *arg), void *arg);
/* Up to max reports of items found ready, in ready-list order (see the header comment for the
 * modes). Errors and hang-ups are reported whatever the interest, as on Linux. */
int epset_collect(struct epset *set, struct epset_report *out, int max, epset_poll_fn poll);
/* Whether some candidate is ready now (the epoll descriptor's own readiness); drops those
 * that are not. */
bool epset_any_ready(struct epset *set, epset_poll_fn poll);

#endif /* NOM_EPSET_H */
