/* vmspace.c: where things live in an application's address space (paper 3.4: the
 * application manages its own mappings). Below NOM_DEVICE_WINDOW (abi.h) libnom keeps:
 *
 *   0x0000000000400000  the ELF image, then the heap (heap.c) growing up from _end
 *   0x0000500000000000  VM_MMAP    anonymous mmap()          (4 TiB)
 *   0x0000540000000000  VM_DMA     nom_dma_alloc()           (1 TiB)
 *   0x0000550000000000  VM_TIMERS  the scheduler's timer heap slots (1 TiB)
 *   0x0000600000000000  VM_STACKS  thread stack reservations (16 TiB)
 *   NOM_STACK_TOP - 64M  the main thread's stack growth area, up to NOM_STACK_TOP
 *
 * Each arena hands out page-multiple reservations by bumping a pointer; released ones are
 * remembered (up to 256 per arena) and reused for a request of the same size, which is the
 * common case (thread stacks, DMA rings). Reservations cost no memory until pages are mapped.
 * Callable from any context but the raw upcall; preemption is disabled inside.
 */
#include <nom/sched.h>
#include "libnom.h"

#define FREE_SLOTS 256

struct arena {
    uintptr_t start, next, end; /* the range [start, end); next: where the bump pointer is */
    struct { uintptr_t addr; size_t bytes; } freed[FREE_SLOTS];
    unsigned nfreed;
};

#define ARENA(start, end) { (start), (start), (end), { { 0, 0 } }, 0 }
static struct arena arenas[VM_ARENAS] = {
    [VM_MMAP] = ARENA(0x500000000000ull, 0x540000000000ull),
    [VM_DMA] = ARENA(0x540000000000ull, 0x550000000000ull),
    [VM_TIMERS] = ARENA(0x550000000000ull, 0x560000000000ull),
    [VM_STACKS] = ARENA(0x600000000000ull, 0x700000000000ull),
};

uintptr_t vm_reserve(enum vm_arena a, size_t bytes)
{
    struct arena *ar = &arenas[a];
    uintptr_t addr = 0;
    bytes = (bytes + NOM_PAGE_SIZE - 1) & ~(NOM_PAGE_SIZE - 1);
    preempt_off();
    for (unsigned i = 0; i < ar->nfreed; i++) {
        if (ar->freed[i].bytes == bytes) {
            addr = ar->freed[i].addr;
            ar->freed[i] = ar->freed[--ar->nfreed];
            break;
        }
    }
    if (!addr && ar->end - ar->next >= bytes) {
        addr = ar->next;
        ar->next += bytes;
    }
    preempt_on();
    return addr;
}

bool vm_contains(enum vm_arena a, uintptr_t addr, size_t bytes)
{
    const struct arena *ar = &arenas[a];
    return addr >= ar->start && addr < ar->end && bytes <= ar->end - addr;
}

void vm_release(enum vm_arena a, uintptr_t addr, size_t bytes)
{
    struct arena *ar = &arenas[a];
    bytes = (bytes + NOM_PAGE_SIZE - 1) & ~(NOM_PAGE_SIZE - 1);
    preempt_off();
    if (ar->nfreed < FREE_SLOTS) /* else the range stays reserved: address space is plenty */
        ar->freed[ar->nfreed++] = (typeof(ar->freed[0])){ addr, bytes };
    preempt_on();
}
