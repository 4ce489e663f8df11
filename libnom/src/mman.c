/* mman.c: anonymous mmap over the VM_MMAP arena (vmspace.c) and NOM_SYS_MEM_MAP. Pages are
 * mapped at once (not on first touch) so the kernel can use them as system call buffers.
 *
 * PROT_NONE is the exception, as on other systems the way to keep a large region and pay only
 * for what is used: mmap(PROT_NONE) reserves the address range and maps nothing (a touch
 * faults; no memory is taken), and mprotect() to any other protection maps the pages it opens
 * (zeroed). lwIP's heap arena grows this way (net/lwip_heap.c): a static 16 MiB array would be
 * zeroed by the kernel at load, most of nhttpd's boot (issue 16). */
#include <errno.h>
#include <sys/mman.h>
#include <nom/syscall.h>
#include "libnom.h"

static size_t round_pages(size_t len)
{
    return (len + NOM_PAGE_SIZE - 1) & ~(NOM_PAGE_SIZE - 1);
}

static uint64_t map_flags(int prot)
{
    return (prot & PROT_READ ? NOM_MAP_READ : 0) | (prot & PROT_WRITE ? NOM_MAP_WRITE : 0) |
           (prot & PROT_EXEC ? NOM_MAP_EXEC : 0);
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    (void)addr, (void)off;
    if (!(flags & MAP_ANONYMOUS) || fd != -1) {
        errno = ENODEV;
        return MAP_FAILED;
    }
    if (len == 0 || (flags & MAP_FIXED) || !(flags & (MAP_PRIVATE | MAP_SHARED))) {
        errno = EINVAL;
        return MAP_FAILED;
    }
    size_t bytes = round_pages(len);
    uintptr_t va = vm_reserve(VM_MMAP, bytes);
    if (va && prot == PROT_NONE)
        return (void *)va;
    if (!va || nom_sys_mem_map(va, bytes / NOM_PAGE_SIZE, map_flags(prot) | NOM_MAP_READ) < 0) {
        if (va)
            vm_release(VM_MMAP, va, bytes);
        errno = ENOMEM;
        return MAP_FAILED;
    }
    return (void *)va;
}

int munmap(void *addr, size_t len)
{
    uintptr_t va = (uintptr_t)addr;
    if ((va & (NOM_PAGE_SIZE - 1)) || len == 0 || !vm_contains(VM_MMAP, va, len)) {
        errno = EINVAL;
        return -1;
    }
    nom_sys_mem_unmap(va, round_pages(len) / NOM_PAGE_SIZE);
    vm_release(VM_MMAP, va, round_pages(len));
    return 0;
}

/* Maps the pages of [va, va + npages) an mmap(PROT_NONE) left unmapped and sets the others'
 * protection: one system call when none is mapped (a reservation opened front to back, the
 * common case), else page by page. */
static int64_t open_reserved(uintptr_t va, uint64_t npages, uint64_t flags)
{
    int64_t r = nom_sys_mem_map(va, npages, flags);
    if (r != -NOM_EBUSY)
        return r;
    for (uint64_t i = 0; i < npages; i++) {
        uintptr_t page = va + i * NOM_PAGE_SIZE;
        r = nom_sys_mem_protect(page, 1, flags);
        if (r == -NOM_ENOENT)
            r = nom_sys_mem_map(page, 1, flags);
        if (r < 0)
            return r;
    }
    return 0;
}

int mprotect(void *addr, size_t len, int prot)
{
    uintptr_t va = (uintptr_t)addr;
    uint64_t npages = round_pages(len) / NOM_PAGE_SIZE;
    int64_t r = nom_sys_mem_protect(va, npages, map_flags(prot));
    if (r == -NOM_ENOENT && prot != PROT_NONE && vm_contains(VM_MMAP, va, len))
        r = open_reserved(va, npages, map_flags(prot) | NOM_MAP_READ);
    if (r < 0) {
        errno = r == -NOM_EINVAL ? EINVAL : ENOMEM;
        return -1;
    }
    return 0;
}

static int page_aligned(const void *addr)
{
    if ((uintptr_t)addr & (NOM_PAGE_SIZE - 1)) {
        errno = EINVAL;
        return -1;
    }
    return 0;
}

/* Nothing is ever paged out on nom (paper 3.4), so advice and locking have nothing to do. */
int madvise(void *addr, size_t len, int advice) { (void)len, (void)advice; return page_aligned(addr); }
int msync(void *addr, size_t len, int flags) { (void)len, (void)flags; return page_aligned(addr); }
int mlock(const void *addr, size_t len) { (void)addr, (void)len; return 0; }
int munlock(const void *addr, size_t len) { (void)addr, (void)len; return 0; }
int mlockall(int flags) { (void)flags; return 0; }
