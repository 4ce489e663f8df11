/*
 * <sys/mman.h> for nom (newlib has none). Only anonymous private mappings exist (there is no
 * file system): mmap() reserves address space in libnom's mapping region and maps zeroed pages
 * through NOM_SYS_MEM_MAP; munmap() gives them back. Constants have Linux's values.
 */
#ifndef NOM_SYS_MMAN_H
#define NOM_SYS_MMAN_H

#include <sys/cdefs.h>
#include <sys/types.h>

#define PROT_NONE  0x0
#define PROT_READ  0x1
#define PROT_WRITE 0x2
#define PROT_EXEC  0x4

#define MAP_SHARED    0x01
#define MAP_PRIVATE   0x02
#define MAP_FIXED     0x10
#define MAP_ANONYMOUS 0x20
#define MAP_ANON      MAP_ANONYMOUS
#define MAP_NORESERVE 0x4000
#define MAP_FAILED    ((void *)-1)

#define MS_ASYNC      1
#define MS_INVALIDATE 2
#define MS_SYNC       4

#define MCL_CURRENT   1
#define MCL_FUTURE    2

#define MADV_NORMAL   0
#define MADV_DONTNEED 4

__BEGIN_DECLS
/* Anonymous mappings only: MAP_FAILED with ENODEV (fd != -1 without MAP_ANONYMOUS), EINVAL
 * (len 0, MAP_FIXED, neither MAP_PRIVATE nor MAP_SHARED), ENOMEM. */
void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t offset);
/* Unmaps [addr, addr+len) of a previous mmap; -1 with EINVAL if it is not one. */
int munmap(void *addr, size_t len);
/* Changes access of mapped pages (NOM_SYS_MEM_PROTECT); -1 with EINVAL or ENOMEM. */
int mprotect(void *addr, size_t len, int prot);
/* Memory is never paged out: accepts and does nothing beyond checking alignment (EINVAL). */
int madvise(void *addr, size_t len, int advice);
/* Anonymous memory has no backing file: 0 for an aligned address, else -1 with EINVAL. */
int msync(void *addr, size_t len, int flags);
int mlock(const void *addr, size_t len);
int munlock(const void *addr, size_t len);
int mlockall(int flags);
__END_DECLS

#endif /* NOM_SYS_MMAN_H */
