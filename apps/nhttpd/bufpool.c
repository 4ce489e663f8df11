/* bufpool.c: the connection buffer pool (bufpool.h). Returned buffers are kept for reuse:
 * the steady state of a busy server then runs without malloc. */
#include "bufpool.h"

#include <stdlib.h>

void bufpool_init(struct bufpool *p, size_t buf_size, size_t limit)
{
    *p = (struct bufpool){.buf_size = buf_size, .limit = limit};
}

void *bufpool_get(struct bufpool *p)
{
    void *b = p->free_list;
    if (p->in_use >= p->limit) {
        p->failures++;
        return NULL;
    }
    if (b != NULL)
        p->free_list = *(void **)b;
    else if ((b = malloc(p->buf_size)) == NULL) {
        p->failures++;
        return NULL;
    }
    if (++p->in_use > p->peak)
        p->peak = p->in_use;
    return b;
}

void bufpool_put(struct bufpool *p, void *buf)
{
    if (buf == NULL)
        return;
    *(void **)buf = p->free_list;
    p->free_list = buf;
    p->in_use--;
}
