/* lwip_heap.c: lwIP's heap (mem_malloc/mem_calloc/mem_free: every PBUF_RAM pbuf, that is every
 * TCP segment we send, every UDP datagram, and unread data the receive budget moves out of the
 * pool) as free lists of size classes over one static arena, in place of lwIP's own first-fit
 * heap. lwipopts.h turns lwIP's heap off (MEM_LIBC_MALLOC) and names these functions.
 *
 * Why: lwIP's mem_malloc walks its free list and splits the block it finds, and mem_free
 * merges the block with its free neighbours: 131 instructions for the one segment a NetPIPE
 * message or an HTTP answer sends (issue 16; results/per-request-2026-11-27-rx-small). Here a
 * block comes off its class's free list, or is cut from the arena's untouched end, and goes
 * back onto that list: no walk, no merge.
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
 * No lock: lwIP and everything that allocates here runs inside nom_preempt_disable() on one
 * core (NO_SYS=1, lwipopts.h). */
#include <stdint.h>
#include <string.h>

#include "lwip/opt.h"
#include "lwip/arch.h"

#include "lwip_heap.h"

#define FINE_STEP 64u
#define FINE_MAX 2048u
#define FINE_CLASSES (FINE_MAX / FINE_STEP)    /* 32: 64, 128, ..., 2048 bytes */
#define COARSE_MIN_SHIFT 12u                   /* then 4 KiB ... */
#define COARSE_MAX_SHIFT 17u                   /* ... to 128 KiB */
#define CLASSES (FINE_CLASSES + COARSE_MAX_SHIFT - COARSE_MIN_SHIFT + 1)
#define MAGIC 0x6e6f6d68u                      /* "nomh": a block handed out by this heap */

/* Each block begins with this; the caller's memory follows, 16-aligned. */
struct block {
    uint32_t cls;
    uint32_t magic;
    struct block *next; /* on its class's free list; unused while handed out */
};

_Static_assert(sizeof(struct block) == 16, "the header keeps the payload 16-aligned");

static _Alignas(16) uint8_t arena[MEM_SIZE];
static size_t arena_cut;           /* bytes of the arena cut into blocks so far */
static struct block *free_list[CLASSES];
static struct nomnet_heap_stats heap_stats;

static size_t class_size(unsigned cls)
{
    return cls < FINE_CLASSES ? (cls + 1) * FINE_STEP
                              : (size_t)1 << (cls - FINE_CLASSES + COARSE_MIN_SHIFT);
}

/* The smallest class whose blocks hold n bytes (header included), or CLASSES if none. */
static unsigned class_of(size_t n)
{
    if (n <= FINE_MAX)
        return (unsigned)((n + FINE_STEP - 1) / FINE_STEP) - 1;
    unsigned shift = 64u - (unsigned)__builtin_clzll(n - 1); /* 2^(shift-1) < n <= 2^shift */
    return shift > COARSE_MAX_SHIFT ? CLASSES : FINE_CLASSES + shift - COARSE_MIN_SHIFT;
}

static struct block *take(unsigned cls)
{
    struct block *b = free_list[cls];
    if (b != NULL) {
        free_list[cls] = b->next;
        return b;
    }
    size_t size = class_size(cls);
    if (size <= sizeof arena - arena_cut) {
        b = (struct block *)(arena + arena_cut);
        arena_cut += size;
        b->cls = cls;
        return b;
    }
    /* The arena's end is used up: a free block of a larger class, kept in its own class. */
    for (unsigned c = cls + 1; c < CLASSES; c++) {
        if ((b = free_list[c]) != NULL) {
            free_list[c] = b->next;
            heap_stats.borrowed++;
            return b;
        }
    }
    return NULL;
}

void *nomnet_heap_malloc(size_t size)
{
    unsigned cls = size > SIZE_MAX - sizeof(struct block) ? CLASSES
                                                          : class_of(size + sizeof(struct block));
    struct block *b = cls < CLASSES ? take(cls) : NULL;
    if (b == NULL) {
        heap_stats.failed++;
        return NULL;
    }
    b->magic = MAGIC;
    heap_stats.in_use += class_size(b->cls);
    if (heap_stats.in_use > heap_stats.peak)
        heap_stats.peak = heap_stats.in_use;
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

void nomnet_heap_free(void *p)
{
    if (p == NULL)
        return;
    struct block *b = (struct block *)p - 1;
    /* A pointer this heap never gave out, or one freed twice, would corrupt a free list: stop
     * here, naming it, as lwIP's own heap asserts on a bad mem_free. */
    LWIP_ASSERT("nomnet_heap_free: not a block of lwIP's heap, or freed twice",
                (uint8_t *)b >= arena && (uint8_t *)b < arena + arena_cut &&
                    b->magic == MAGIC && b->cls < CLASSES);
    b->magic = 0;
    b->next = free_list[b->cls];
    free_list[b->cls] = b;
    heap_stats.in_use -= class_size(b->cls);
}

void nomnet_heap_get_stats(struct nomnet_heap_stats *out)
{
    *out = heap_stats;
    out->arena_cut = arena_cut;
    out->arena_size = sizeof arena;
}
