/* dma.c: physically contiguous, zeroed memory for device rings and buffers (trusted-mode DMA,
 * paper 3.5), in the DMA arena of the address space (vmspace.c). */
#include <errno.h>
#include <pthread.h>
#include <nom/dma.h>
#include <nom/syscall.h>
#include "libnom.h"

static pthread_mutex_t dma_lock = PTHREAD_MUTEX_INITIALIZER;

static size_t pages_of(size_t bytes)
{
    return (bytes + NOM_PAGE_SIZE - 1) / NOM_PAGE_SIZE;
}

void *nom_dma_alloc(size_t bytes, uint64_t *phys)
{
    if (bytes == 0) {
        errno = EINVAL;
        return NULL;
    }
    size_t np = pages_of(bytes);
    pthread_mutex_lock(&dma_lock);
    uintptr_t va = vm_reserve(VM_DMA, np * NOM_PAGE_SIZE);
    int64_t r = va ? nom_sys_mem_map(va, np, NOM_MAP_READ | NOM_MAP_WRITE | NOM_MAP_CONTIG)
                   : -NOM_ENOMEM;
    /* A failed translation must not become physical address 0: the device would DMA there. */
    int64_t pa = r == 0 ? nom_sys_virt_to_phys(va) : r;
    if (pa <= 0 && r == 0)
        nom_sys_mem_unmap(va, np);
    if (pa <= 0 && va)
        vm_release(VM_DMA, va, np * NOM_PAGE_SIZE);
    pthread_mutex_unlock(&dma_lock);
    if (pa <= 0) {
        errno = ENOMEM;
        return NULL;
    }
    if (phys)
        *phys = (uint64_t)pa;
    return (void *)va;
}

void nom_dma_free(void *p, size_t bytes)
{
    size_t np = pages_of(bytes);
    pthread_mutex_lock(&dma_lock);
    nom_sys_mem_unmap((uintptr_t)p, np);
    vm_release(VM_DMA, (uintptr_t)p, np * NOM_PAGE_SIZE);
    pthread_mutex_unlock(&dma_lock);
}

int nom_dma_open(void *va, size_t bytes, uint64_t *phys)
{
    uintptr_t at = (uintptr_t)va;
    if ((at | bytes) & (NOM_PAGE_SIZE - 1) || bytes == 0 || !vm_contains(VM_MMAP, at, bytes))
        return -EINVAL;
    size_t np = bytes / NOM_PAGE_SIZE;
    if (nom_sys_mem_map(at, np, NOM_MAP_READ | NOM_MAP_WRITE | NOM_MAP_CONTIG) < 0)
        return -ENOMEM;
    int64_t pa = nom_sys_virt_to_phys(at);
    if (pa <= 0) { /* as in nom_dma_alloc: never physical address 0 to a device */
        nom_sys_mem_unmap(at, np);
        return -ENOMEM;
    }
    *phys = (uint64_t)pa;
    return 0;
}

uint64_t nom_virt_to_phys(const void *p)
{
    int64_t r = nom_sys_virt_to_phys((uintptr_t)p);
    return r < 0 ? 0 : (uint64_t)r;
}
