/* lwip_heap.c: lwIP's heap (mem_malloc/mem_calloc/mem_free: every PBUF_RAM pbuf, that is every
 * TCP segment we send, every UDP datagram, and unread data the receive budget moves out of the
 * pool) as free lists of size classes over one arena, in place of lwIP's own first-fit
 * heap. lwipopts.h turns lwIP's heap off (MEM_LIBC_MALLOC) and names these functions.
 *
 * Why: lwIP's mem_malloc walks its free list and splits the block it finds, and mem_free
 * merges the block with its free neighbours: 131 instructions for the one segment a NetPIPE
 * message or an HTTP answer sends (issue 16; results/per-request-2026-11-27-rx-small). Here a
 * block comes off its class's free list, or is cut from the arena's untouched end, and goes
 * back onto that list: no walk, no merge. The list's part is inline in lwIP's mem_malloc and
 * mem_free (lwip_heap.h): 51 instructions for both (results/per-request-2026-11-27-lwip-heap;
 * 73 when it was all out of line here).
 *
 * Classes: every multiple of 64 bytes up to 2 KiB (a segment's block, MSS + pbuf + headers,
 * about 1.55 KiB, wastes at most 63 bytes), then powers of two up to 128 KiB (a 64 KiB UDP
 * datagram). A block keeps its class for life: memory once cut for one class is reused only
 * for it. What that costs: when the arena's end is used up, a request whose list is empty
 * takes a free block of a larger class (and wastes the difference); only when there is none
 * does it fail (NULL: lwIP answers ERR_MEM, the socket EAGAIN/ENOMEM), possibly with free
 * blocks of smaller classes standing by, where lwIP's heap could have merged them. The arena
 * is lwIP's MEM_SIZE (16 MiB), which lwipopts.h sizes for its worst case.
 *
 * The arena is address space reserved at the first request and opened ARENA_STEP at a time
 * as the cut reaches it (lazy_region.h), not a static array: the kernel zeroes an
 * application's whole .bss at load, and 16 MiB of it was more than half of nhttpd's 27.7 MB,
 * the largest step of its boot (issue 16; results/boot-time-2026-11-29-grub-uncompressed). An
 * application that never needs more than a few segments' worth now maps ARENA_STEP.
 *
 * No lock: lwIP and everything that allocates here runs inside nom_preempt_disable() on one
 * core (NO_SYS=1, lwipopts.h). */
#include <stdint.h>
#include <string.h>

#include "lwip/opt.h"
#include "lwip/arch.h"

#include "lwip_heap.h"

#define FINE_CLASSES NOMNET_HEAP_FINE_CLASSES
#define CLASSES NOMNET_HEAP_CLASSES
#define COARSE_MIN_SHIFT 12u /* 4 KiB ... */
#define COARSE_MAX_SHIFT 17u /* ... to 128 KiB */

_Static_assert(sizeof(struct nomnet_heap_block) == 16, "the header keeps the payload 16-aligned");
_Static_assert(FINE_CLASSES + COARSE_MAX_SHIFT - COARSE_MIN_SHIFT + 1 == CLASSES, "classes");

/* 256 KiB: one system call per 160 or so segment blocks cut, while a boot maps only this. */
#define ARENA_STEP NOMNET_HEAP_ARENA_STEP
_Static_assert(MEM_SIZE % ARENA_STEP == 0, "the arena opens in whole steps");

/* Each step physically contiguous where the system has the memory: a frame lwIP built in a
 * block of one such step can be lent to the device as it lies (netif_virtio.c, zero-copy
 * transmit); the rare block that straddles two steps, or lies in a step opened page by page,
 * is copied as before. */
static uint64_t step_phys[MEM_SIZE / ARENA_STEP];
struct lazy_region nomnet_heap_region = {.size = MEM_SIZE, .step = ARENA_STEP,
                                         .step_phys = step_phys};
size_t nomnet_heap_arena_cut; /* bytes of the arena cut into blocks so far */
size_t nomnet_heap_in_use;
struct nomnet_heap_block *nomnet_heap_lists[CLASSES];
static uint64_t borrowed, failed;

/* The smallest class whose blocks hold n bytes (header included), or CLASSES if none. */
static unsigned class_of(size_t n)
{
    if (n <= NOMNET_HEAP_FINE_MAX)
        return nomnet_heap_fine_class(n);
    unsigned shift = 64u - (unsigned)__builtin_clzll(n - 1); /* 2^(shift-1) < n <= 2^shift */
    return shift > COARSE_MAX_SHIFT ? CLASSES : FINE_CLASSES + shift - COARSE_MIN_SHIFT;
}

/* A block of class cls: off its free list, else cut from the arena's end, else (the end is
 * used up) a free block of a larger class, which keeps its own class. */
static struct nomnet_heap_block *take(unsigned cls)
{
    struct nomnet_heap_block *b = nomnet_heap_lists[cls];
    if (b != NULL) {
        nomnet_heap_lists[cls] = b->next;
        return b;
    }
    size_t size = nomnet_heap_class_size(cls);
    if (lazy_region_open(&nomnet_heap_region, nomnet_heap_arena_cut + size)) {
        b = (struct nomnet_heap_block *)(nomnet_heap_region.base + nomnet_heap_arena_cut);
        nomnet_heap_arena_cut += size;
        b->cls = cls;
        return b;
    }
    for (unsigned c = cls + 1; c < CLASSES; c++) {
        if ((b = nomnet_heap_lists[c]) != NULL) {
            nomnet_heap_lists[c] = b->next;
            borrowed++;
            return b;
        }
    }
    return NULL;
}

/* Every request the inline nomnet_heap_malloc does not serve from a free list. */
void *nomnet_heap_malloc_slow(size_t size)
{
    unsigned cls = size > SIZE_MAX - sizeof(struct nomnet_heap_block)
                       ? CLASSES : class_of(size + sizeof(struct nomnet_heap_block));
    struct nomnet_heap_block *b = cls < CLASSES ? take(cls) : NULL;
    if (b == NULL) {
        failed++;
        return NULL;
    }
    b->magic = NOMNET_HEAP_MAGIC;
    nomnet_heap_in_use += nomnet_heap_class_size(b->cls);
    return b + 1;
}

void *nomnet_heap_calloc(size_t count, size_t size)
{
    if (size != 0 && count > SIZE_MAX / size)
        return NULL;
    void *p = nomnet_heap_malloc(count * size);
    if (p != NULL)
        memset(p, 0, count * size);
    return p;
}

/* Stops the application, naming the heap, as lwIP's own heap asserts on a bad mem_free. */
void nomnet_heap_bad_free(void *p)
{
    LWIP_PLATFORM_ASSERT("mem_free: not a block of lwIP's heap, or freed twice");
    (void)p;
    abort();
}

void nomnet_heap_get_stats(struct nomnet_heap_stats *out)
{
    *out = (struct nomnet_heap_stats){.in_use = nomnet_heap_in_use,
                                      .arena_cut = nomnet_heap_arena_cut,
                                      .arena_mapped = nomnet_heap_region.mapped,
                                      .arena_size = MEM_SIZE, .borrowed = borrowed,
                                      .failed = failed};
}
