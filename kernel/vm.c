/* vm.c: page tables (Intel SDM vol. 3, ch. 4, 4-level paging). The kernel half (PML4 entries
 * 256-511: the direct map of physical memory and the kernel image) is shared by every address
 * space; the lower half belongs to one application. User pointers are only dereferenced after
 * walking the application's page table, so a bad pointer is an error code, never a fault. */
#include "defs.h"
#include "cpu.h"

extern uint64_t boot_pml4_phys;
static uint64_t kernel_pml4;

/* Eight stores an iteration rather than memset's rep stosq: TCG runs each rep iteration as a
 * pass of its own through the translated block, and an application's .bss is all zeroed here
 * at its load (nhttpd's 27 MB; issue 16's boot time). */
void frame_zero(uint64_t pa, uint64_t n) {
    uint64_t *q = P2V(pa), *end = q + n * PAGE_SIZE / sizeof *q;
    for (; q < end; q += 8) {
        q[0] = 0, q[1] = 0, q[2] = 0, q[3] = 0;
        q[4] = 0, q[5] = 0, q[6] = 0, q[7] = 0;
    }
}

_Noreturn void frame_bug(const char *what, uint64_t pa) {
    panic("%s: %lx", what, pa);
}

uint64_t vm_kernel_pml4(void) { return kernel_pml4; }

static uint64_t *table(uint64_t pa) { return P2V(pa & PTE_ADDR); }

/* The entry for va at level (3 = PML4 ... 0 = PT), creating missing tables if asked. */
static uint64_t *walk(uint64_t pml4, uint64_t va, int level, bool create, uint64_t table_flags) {
    uint64_t *t = table(pml4);
    for (int l = 3; l > level; l--) {
        uint64_t *e = &t[(va >> (12 + 9 * l)) & 511];
        if (!(*e & PTE_P)) {
            if (!create)
                return NULL;
            uint64_t f = frame_alloc();
            if (!f)
                return NULL;
            *e = f | table_flags;
        } else if (*e & PTE_PS) {
            return NULL; /* inside a large page */
        }
        t = table(*e);
    }
    return &t[(va >> (12 + 9 * level)) & 511];
}

/* Extends the direct map to all RAM (2 MiB pages); keeps what boot.S set up. */
void vm_init(uint64_t max_phys) {
    kernel_pml4 = boot_pml4_phys;
    /* Every address space copies the kernel's PML4 entries when it is made, so the direct map's
     * PDPTs must exist from the start: 16 entries cover physical addresses (RAM and 64-bit BARs)
     * up to 8 TiB. */
    for (uint64_t i = 0; i < 16; i++)
        if (!walk(kernel_pml4, DIRECT_MAP + (i << 39), 2, true, PTE_P | PTE_W))
            panic("vm_init: out of memory");
    for (uint64_t pa = 1ull << 30; pa < max_phys; pa += 2ull << 20) {
        uint64_t *pde = walk(kernel_pml4, DIRECT_MAP + pa, 1, true, PTE_P | PTE_W);
        if (!pde)
            panic("vm_init: out of memory");
        *pde = pa | PTE_P | PTE_W | PTE_PS | PTE_G | PTE_NX;
    }
}

/* Maps MMIO uncached into the direct map and returns its kernel address; NULL when no frame is
 * left for a page table (callers at boot panic, later ones fail with an error). */
void *vm_map_mmio(uint64_t pa, uint64_t size) {
    for (uint64_t p = PAGE_ROUND_DOWN(pa); p < pa + size; p += PAGE_SIZE) {
        uint64_t *pde = walk(kernel_pml4, DIRECT_MAP + p, 1, false, 0);
        if (pde && (*pde & PTE_PS)) {
            if ((*pde & PTE_ADDR & ~((2ull << 20) - 1)) != (p & ~((2ull << 20) - 1)))
                panic("vm_map_mmio: %lx overlaps a large page", p);
            *pde |= PTE_PCD | PTE_PWT; /* a 2 MiB page of the boot map: make it uncached */
            vm_flush_page(DIRECT_MAP + p);
            continue;
        }
        uint64_t *pte = walk(kernel_pml4, DIRECT_MAP + p, 0, true, PTE_P | PTE_W);
        if (!pte)
            return NULL;
        *pte = p | PTE_P | PTE_W | PTE_PCD | PTE_PWT | PTE_NX;
        vm_flush_page(DIRECT_MAP + p);
    }
    return P2V(pa);
}

uint64_t vm_new_address_space(void) {
    uint64_t pml4 = frame_alloc();
    if (!pml4)
        return 0;
    memcpy((uint64_t *)table(pml4) + 256, (uint64_t *)table(kernel_pml4) + 256, 256 * 8);
    return pml4;
}

static void free_level(uint64_t pa, int level) {
    uint64_t *t = table(pa);
    for (int i = 0; i < 512; i++) {
        if (!(t[i] & PTE_P))
            continue;
        if (level > 0)
            free_level(t[i], level - 1);
        else if (t[i] & PTE_SW_FRAME)
            frame_free(t[i] & PTE_ADDR);
    }
    frame_free(pa & PTE_ADDR);
}

/* Frees the application half: its frames and page tables (device pages are not its frames). */
void vm_free_address_space(uint64_t pml4) {
    /* A CPU still on these tables would walk a frame that is someone else's once reused
     * (sched_forget_app moves idle CPUs off first). */
    for (int i = 0; i < ncpus; i++)
        if (__atomic_load_n(&cpus[i].pml4_loaded, __ATOMIC_ACQUIRE) == pml4)
            panic("freeing page tables cpu %d still has loaded", i);
    uint64_t *t = table(pml4);
    for (int i = 0; i < 256; i++)
        if (t[i] & PTE_P)
            free_level(t[i], 2);
    frame_free(pml4);
}

int vm_map_page(uint64_t pml4, uint64_t va, uint64_t pa, uint64_t flags) {
    uint64_t *pte = walk(pml4, va, 0, true, PTE_P | PTE_W | PTE_U);
    if (!pte)
        return -NOM_ENOMEM;
    *pte = (pa & PTE_ADDR) | flags;
    vm_flush_page(va);
    return 0;
}

uint64_t *vm_lookup(uint64_t pml4, uint64_t va) {
    return walk(pml4, va, 0, false, 0);
}

void vm_unmap_page(uint64_t pml4, uint64_t va) {
    uint64_t *pte = vm_lookup(pml4, va);
    if (!pte || !(*pte & PTE_P))
        return;
    if (*pte & PTE_SW_FRAME)
        frame_free(*pte & PTE_ADDR);
    *pte = 0;
    vm_flush_page(va);
}

void vm_switch(uint64_t pml4) {
    uint64_t cur;
    __asm__ volatile("movq %%cr3, %0" : "=r"(cur));
    if (cur != pml4)
        __asm__ volatile("movq %0, %%cr3" ::"r"(pml4) : "memory");
    __atomic_store_n(&this_cpu()->pml4_loaded, pml4, __ATOMIC_RELEASE);
}

/* Only the local CPU; the other vCPUs of a multi-core application are shot down by
 * sched_sync_app once a call has changed all its pages. */
void vm_flush_page(uint64_t va) {
    __asm__ volatile("invlpg (%0)" ::"r"(va) : "memory");
}

/* The PTE of a user page the application may read (write: and write), or NULL. */
static uint64_t *user_page(uint64_t pml4, uint64_t va, bool write) {
    uint64_t *pte = vm_lookup(pml4, va);
    if (!pte || !(*pte & PTE_P) || !(*pte & PTE_U) || (*pte & PTE_SW_DEVICE) ||
        (write && !(*pte & PTE_W)))
        return NULL;
    return pte;
}

bool vm_user_range_ok(uint64_t pml4, uint64_t va, uint64_t len, bool write) {
    if (va < NOM_USER_MIN || va >= NOM_USER_MAX || len > NOM_USER_MAX - va)
        return false;
    for (uint64_t p = PAGE_ROUND_DOWN(va); p < va + len; p += PAGE_SIZE)
        if (!user_page(pml4, p, write))
            return false;
    return true;
}

/* All or nothing: the whole range is checked before a byte moves. A range within one page
 * (the upcall frame and control word, every small argument: about five per wake-up of a
 * blocked application) walks the page table once instead of twice. */
static int copy_user(uint64_t pml4, uint64_t uva, void *kbuf, uint64_t len, bool to_user) {
    uint64_t off = uva & (PAGE_SIZE - 1);
    if (len <= PAGE_SIZE - off) {
        uint64_t *pte = uva >= NOM_USER_MIN && uva < NOM_USER_MAX ?
                        user_page(pml4, uva, to_user) : NULL;
        if (!pte)
            return -NOM_EFAULT;
        void *k = (uint8_t *)P2V(*pte & PTE_ADDR) + off;
        memcpy(to_user ? k : kbuf, to_user ? kbuf : k, len);
        return 0;
    }
    if (!vm_user_range_ok(pml4, uva, len, to_user))
        return -NOM_EFAULT;
    while (len) {
        uint64_t n = PAGE_SIZE - (uva & (PAGE_SIZE - 1));
        if (n > len)
            n = len;
        void *k = (uint8_t *)P2V(*vm_lookup(pml4, uva) & PTE_ADDR) + (uva & (PAGE_SIZE - 1));
        if (to_user)
            memcpy(k, kbuf, n);
        else
            memcpy(kbuf, k, n);
        uva += n;
        kbuf = (uint8_t *)kbuf + n;
        len -= n;
    }
    return 0;
}

int copy_from_user(uint64_t pml4, void *dst, uint64_t uva, uint64_t len) {
    return copy_user(pml4, uva, dst, len, false);
}

int copy_to_user(uint64_t pml4, uint64_t uva, const void *src, uint64_t len) {
    return copy_user(pml4, uva, (void *)src, len, true);
}
