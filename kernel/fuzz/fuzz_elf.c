/* fuzz_elf.c: libFuzzer harness of the kernel's ELF loader (elf.c): the input is a boot
 * module's bytes, parsed for the range app.c loads into ([NOM_USER_MIN, NOM_DEVICE_WINDOW)).
 * An accepted image must keep elf.h's promises, checked here as app.c's load_image relies on
 * them: every segment's file bytes inside the image (read here, so ASan sees any overrun), every
 * segment inside the range, no two overlapping, at most ELF_MAX_SEGMENTS, the entry point in an
 * executable segment. A refusal must come with a reason. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf.h"
#include "expect.h"
#include "nom/abi.h"

static volatile uint8_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* An exact-size copy (malloc aligns it as the kernel's page-aligned modules are). */
    uint8_t *image = malloc(size ? size : 1);
    memcpy(image, data, size);
    struct elf_segment segs[ELF_MAX_SEGMENTS + 1];
    int n = -1;
    uint64_t entry = 0;
    memset(segs, 0xa5, sizeof segs);
    const char *err = elf_parse(image, size, NOM_USER_MIN, NOM_DEVICE_WINDOW, segs, &n, &entry);
    EXPECT(n >= 0 && n <= ELF_MAX_SEGMENTS);
    if (err) {
        EXPECT(err[0] != '\0');
        free(image);
        return 0;
    }
    EXPECT(n > 0);
    int entry_found = 0;
    for (int i = 0; i < n; i++) {
        const struct elf_segment *s = &segs[i];
        EXPECT(s->memsz > 0 && s->filesz <= s->memsz);
        EXPECT(s->offset <= size && s->filesz <= size - s->offset);
        EXPECT(s->vaddr >= NOM_USER_MIN && s->vaddr < NOM_DEVICE_WINDOW
               && s->memsz <= NOM_DEVICE_WINDOW - s->vaddr);
        uint8_t sum = 0;
        for (uint64_t b = 0; b < s->filesz; b++) /* what write_app_memory copies */
            sum += image[s->offset + b];
        sink = sum;
        for (int j = 0; j < i; j++)
            EXPECT(s->vaddr >= segs[j].vaddr + segs[j].memsz
                   || segs[j].vaddr >= s->vaddr + s->memsz);
        if (s->flags & 1 && entry >= s->vaddr && entry - s->vaddr < s->memsz)
            entry_found = 1;
    }
    EXPECT(entry_found);
    free(image);
    return 0;
}
