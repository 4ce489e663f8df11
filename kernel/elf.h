/* elf.h: the application image parser (pure code; host unit tests in tests/). */
#ifndef NOM_ELF_H
#define NOM_ELF_H

#include <stdint.h>

struct elf_segment {
    uint64_t vaddr, memsz, offset, filesz;
    uint32_t flags; /* PF_X 1, PF_W 2, PF_R 4 */
};

#define ELF_MAX_SEGMENTS 16

/* Checks a static x86-64 ELF executable for loading into [user_min, user_max) and lists its
 * PT_LOAD segments. Returns NULL when it is loadable, else a short reason; never reads outside
 * image[0, len). */
const char *elf_parse(const void *image, uint64_t len, uint64_t user_min, uint64_t user_max,
                      struct elf_segment *segs, int *nsegs, uint64_t *entry);

#endif
