/* elf.c: validates an application's ELF image (System V gABI, ELF-64) before anything is
 * mapped. A malformed image is refused with a reason; nothing in it is trusted. */
#include <stddef.h>
#include "elf.h"

struct ehdr {
    uint8_t ident[16];
    uint16_t type, machine;
    uint32_t version;
    uint64_t entry, phoff, shoff;
    uint32_t flags;
    uint16_t ehsize, phentsize, phnum, shentsize, shnum, shstrndx;
};

struct phdr {
    uint32_t type, flags;
    uint64_t offset, vaddr, paddr, filesz, memsz, align;
};

#define PT_LOAD 1
#define PT_DYNAMIC 2
#define PT_INTERP 3

/* Byte ranges may not overlap; sharing a page is fine (the loader merges permissions). */
static int ranges_overlap(const struct elf_segment *a, const struct elf_segment *b) {
    return a->vaddr < b->vaddr + b->memsz && b->vaddr < a->vaddr + a->memsz;
}

const char *elf_parse(const void *image, uint64_t len, uint64_t user_min, uint64_t user_max,
                      struct elf_segment *segs, int *nsegs, uint64_t *entry) {
    const struct ehdr *eh = image;
    *nsegs = 0;
    if (len < sizeof *eh)
        return "too short for an ELF header";
    if (eh->ident[0] != 0x7f || eh->ident[1] != 'E' || eh->ident[2] != 'L' || eh->ident[3] != 'F')
        return "not an ELF file";
    if (eh->ident[4] != 2 || eh->ident[5] != 1)
        return "not a little-endian 64-bit ELF";
    if (eh->type != 2)
        return "not an executable (ET_EXEC)";
    if (eh->machine != 62)
        return "not x86-64";
    if (eh->phentsize != sizeof(struct phdr) || eh->phnum == 0)
        return "bad program header size or count";
    if (eh->phoff > len || (uint64_t)eh->phnum * sizeof(struct phdr) > len - eh->phoff)
        return "program headers outside the file";
    int found_entry = 0;
    for (int i = 0; i < eh->phnum; i++) {
        struct phdr ph;
        const uint8_t *src = (const uint8_t *)image + eh->phoff + i * sizeof ph;
        for (size_t b = 0; b < sizeof ph; b++) /* may be unaligned */
            ((uint8_t *)&ph)[b] = src[b];
        if (ph.type == PT_INTERP || ph.type == PT_DYNAMIC)
            return "dynamically linked (nom runs static executables)";
        if (ph.type != PT_LOAD || ph.memsz == 0)
            continue;
        if (*nsegs == ELF_MAX_SEGMENTS)
            return "too many PT_LOAD segments";
        if (ph.filesz > ph.memsz)
            return "segment file size larger than its memory size";
        if (ph.offset > len || ph.filesz > len - ph.offset)
            return "segment data outside the file";
        if (ph.vaddr < user_min || ph.vaddr >= user_max || ph.memsz > user_max - ph.vaddr)
            return "segment outside the application address range";
        struct elf_segment s = {ph.vaddr, ph.memsz, ph.offset, ph.filesz, ph.flags};
        for (int j = 0; j < *nsegs; j++)
            if (ranges_overlap(&segs[j], &s))
                return "segments overlap";
        if (ph.flags & 1 && eh->entry >= ph.vaddr && eh->entry < ph.vaddr + ph.memsz)
            found_entry = 1;
        segs[(*nsegs)++] = s;
    }
    if (*nsegs == 0)
        return "no loadable segment";
    if (!found_entry)
        return "entry point is not in an executable segment";
    *entry = eh->entry;
    return NULL;
}
