/* heap.c: the program break for newlib's malloc. The heap starts at the page after _end
 * (linker/app.ld) and grows up; sbrk maps new pages right away, in steps of at least 256 KiB to
 * keep system calls rare. Mapping eagerly (rather than on first touch) is deliberate: the kernel
 * reads and writes heap buffers passed to system calls (console output, device grants) and
 * fails with EFAULT on unmapped pages instead of raising a fault upcall. Shrinking unmaps.
 */
#include <errno.h>
#include <stdint.h>
#include <nom/sched.h>
#include <nom/syscall.h>
#include "libnom.h"

#define HEAP_STEP (256ul << 10)
#define HEAP_LIMIT 0x500000000000ull /* VM_MMAP starts here (vmspace.c) */

extern char _end[];
static uintptr_t brk_cur, mapped_top;

void heap_init(void)
{
    brk_cur = mapped_top = ((uintptr_t)_end + NOM_PAGE_SIZE - 1) & ~(NOM_PAGE_SIZE - 1);
}

static int grow_mapping(uintptr_t need_top)
{
    uintptr_t want = (need_top + HEAP_STEP - 1) & ~(HEAP_STEP - 1);
    if (want > HEAP_LIMIT)
        want = (need_top + NOM_PAGE_SIZE - 1) & ~(NOM_PAGE_SIZE - 1);
    int64_t r = nom_sys_mem_map(mapped_top, (want - mapped_top) / NOM_PAGE_SIZE,
                                NOM_MAP_READ | NOM_MAP_WRITE);
    if (r < 0)
        return -1;
    mapped_top = want;
    return 0;
}

static void shrink_mapping(uintptr_t keep_top)
{
    uintptr_t top = (keep_top + HEAP_STEP - 1) & ~(HEAP_STEP - 1);
    /* Keep one step of slack against flapping. If the kernel refuses the unmap the pages stay
     * mapped, and so must mapped_top: growing again would otherwise map over them (-EBUSY). */
    if (top + HEAP_STEP < mapped_top &&
        nom_sys_mem_unmap(top, (mapped_top - top) / NOM_PAGE_SIZE) == 0)
        mapped_top = top;
}

void *sbrk(ptrdiff_t incr)
{
    void *old = NULL;
    preempt_off();
    uintptr_t nb = brk_cur + (uintptr_t)incr;
    if ((incr > 0 && (nb < brk_cur || nb > HEAP_LIMIT)) ||
        (incr < 0 && nb > brk_cur) || (nb > mapped_top && grow_mapping(nb) != 0)) {
        errno = ENOMEM;
        old = (void *)-1;
    } else {
        old = (void *)brk_cur;
        brk_cur = nb;
        if (incr < 0)
            shrink_mapping(nb);
    }
    preempt_on();
    return old;
}
