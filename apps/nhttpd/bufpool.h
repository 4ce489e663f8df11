/*
 * bufpool.h: fixed-size connection buffers, recycled through a free list, under a global cap.
 *
 * Contract: a connection holds a buffer only while it has bytes in it (a partial request, or
 * a response not yet written), so idle keep-alive connections cost no buffer and memory is
 * bounded by the cap whatever the number of connections. Single-threaded (nhttpd's loop).
 */
#ifndef NHTTPD_BUFPOOL_H
#define NHTTPD_BUFPOOL_H

#include <stddef.h>

struct bufpool {
    size_t buf_size;  /* bytes per buffer */
    size_t limit;     /* most buffers handed out at once */
    size_t in_use;    /* handed out now */
    size_t peak;      /* most ever handed out */
    size_t failures;  /* bufpool_get calls refused */
    void *free_list;  /* returned buffers, linked through their first word */
};

/* Sets up an empty pool of buffers of buf_size bytes (>= sizeof(void *)), at most limit. */
void bufpool_init(struct bufpool *p, size_t buf_size, size_t limit);

/* A buffer, or NULL when limit buffers are out or malloc fails (counted in failures). */
void *bufpool_get(struct bufpool *p);

/* Returns a buffer from bufpool_get; NULL is ignored. */
void bufpool_put(struct bufpool *p, void *buf);

#endif /* NHTTPD_BUFPOOL_H */
