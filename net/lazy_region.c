/* lazy_region.c: see lazy_region.h. */
#include <sys/mman.h>

#include <nom/dma.h>

#include "lazy_region.h"

/* Opens whole steps up to `to`, each physically contiguous if the system has the memory, else
 * page by page (its step_phys 0: a device cannot be given it in one piece). */
static bool open_contiguous(struct lazy_region *r, size_t to)
{
    while (r->mapped < to) {
        size_t n = to - r->mapped < r->step ? to - r->mapped : r->step;
        uint64_t *phys = &r->step_phys[r->mapped / r->step];
        if (nom_dma_open(r->base + r->mapped, n, phys) != 0) {
            *phys = 0;
            if (mprotect(r->base + r->mapped, n, PROT_READ | PROT_WRITE) != 0)
                return false;
        }
        r->mapped += n;
    }
    return true;
}

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
    if (r->step_phys != NULL)
        return open_contiguous(r, to);
    if (mprotect(r->base + r->mapped, to - r->mapped, PROT_READ | PROT_WRITE) != 0)
        return false;
    r->mapped = to;
    return true;
}
