/* lazy_region.c: see lazy_region.h. */
#include <sys/mman.h>

#include "lazy_region.h"

bool lazy_region_open(struct lazy_region *r, size_t need)
{
    if (need <= r->mapped)
        return true;
    if (need > r->size)
        return false;
    if (r->base == NULL) {
        void *p = mmap(NULL, r->size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return false;
        r->base = p;
    }
    size_t to = (need + r->step - 1) / r->step * r->step;
    if (to > r->size)
        to = r->size;
    if (mprotect(r->base + r->mapped, to - r->mapped, PROT_READ | PROT_WRITE) != 0)
        return false;
    r->mapped = to;
    return true;
}
