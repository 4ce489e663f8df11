/* tlsblock.c: __thread variables (x86-64 ELF TLS, variant II, local-exec: a static program's
 * thread-local offsets are fixed at link time, relative to the thread pointer in the FS base).
 * Each thread gets a copy of the PT_TLS template just below its thread pointer and a small TCB
 * at it whose first word points to itself (what %fs:0 must read). Only a program that has
 * thread-local data pays anything: then every switch to another thread sets the FS base
 * (NOM_SYS_SET_FS_BASE, abi.h); without it there is no block and no system call. */
#include <stdint.h>
#include <string.h>
#include <nom/syscall.h>
#include "libnom.h"

#define TCB_SIZE 64 /* self pointer, then zeros (%fs:0x28 is where a stack guard would live) */

extern char __tls_image[], __tls_filesz[], __tls_memsz[], __tls_align[]; /* linker/app.ld */

static size_t round_up(size_t x, size_t a) { return (x + a - 1) & ~(a - 1); }
static size_t tls_align(void) { return (uintptr_t)__tls_align < 16 ? 16 : (uintptr_t)__tls_align; }
static size_t tls_memsz(void) { return round_up((uintptr_t)__tls_memsz, tls_align()); }

size_t tls_block_size(void)
{
    return (uintptr_t)__tls_memsz ? tls_memsz() + TCB_SIZE + tls_align() : 0;
}

uintptr_t tls_block_init(void *mem)
{
    if (!(uintptr_t)__tls_memsz)
        return 0;
    uintptr_t start = round_up((uintptr_t)mem, tls_align());
    uintptr_t tp = start + tls_memsz();
    memcpy((void *)start, __tls_image, (uintptr_t)__tls_filesz);
    memset((char *)start + (uintptr_t)__tls_filesz, 0,
           tls_memsz() - (uintptr_t)__tls_filesz + TCB_SIZE);
    *(uintptr_t *)tp = tp;
    return tp;
}

void tls_activate(uintptr_t tp)
{
    if (tp && nom_sys_set_fs_base(tp) < 0)
        nom_panic("set_fs_base refused the thread pointer");
}
