/* The application image parser (elf.c) on a real application ELF (argv[1]) and on malformed
 * variants of it: every case prints PASS/FAIL. Built with AddressSanitizer, so any read outside
 * the image is itself a failure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "elf.h"

#define USER_MIN 0x400000ull
#define USER_MAX 0x7e0000000000ull

static uint8_t *image;
static size_t image_len;
static int failures;

static const char *parse(const uint8_t *img, size_t len) {
    uint8_t *copy = malloc(len ? len : 1); /* exact size: ASan catches over-reads */
    memcpy(copy, img, len);
    struct elf_segment segs[ELF_MAX_SEGMENTS];
    int n;
    uint64_t entry;
    const char *r = elf_parse(copy, len, USER_MIN, USER_MAX, segs, &n, &entry);
    free(copy);
    return r;
}

/* Takes ownership of img when it is not the original image. */
static void expect(const char *name, uint8_t *img, size_t len, const char *want) {
    const char *got = parse(img, len);
    if (img != image)
        free(img);
    int ok = want ? got && strstr(got, want) : got == NULL;
    printf("%s %s (%s)\n", ok ? "PASS" : "FAIL", name, got ? got : "loadable");
    failures += !ok;
}

/* A copy of the image with a field overwritten. */
static uint8_t *patched(size_t off, const void *val, size_t n) {
    uint8_t *p = malloc(image_len);
    memcpy(p, image, image_len);
    memcpy(p + off, val, n);
    return p;
}

#define PHOFF (*(uint64_t *)(image + 32))
#define PH(i, field) (PHOFF + (i) * 56 + (field))
enum { P_TYPE = 0, P_FLAGS = 4, P_OFFSET = 8, P_VADDR = 16, P_FILESZ = 32, P_MEMSZ = 40 };

static int first_load(void) {
    for (int i = 0;; i++)
        if (*(uint32_t *)(image + PH(i, P_TYPE)) == 1) return i;
}

int main(int argc, char **argv) {
    FILE *f = fopen(argv[1], "rb");
    if (!f || argc < 2) { printf("FAIL cannot_open_image\n"); return 1; }
    image = malloc(1 << 24);
    image_len = fread(image, 1, 1 << 24, f);
    fclose(f);
    int L = first_load();
    uint64_t u64;
    uint32_t u32;
    uint16_t u16;

    expect("real_application_loads", image, image_len, NULL);
    expect("empty_file", image, 0, "too short");
    expect("truncated_header", image, 40, "too short");
    expect("truncated_program_headers", image, PHOFF + 20, "outside the file");
    expect("bad_magic", patched(1, "X", 1), image_len, "not an ELF");
    expect("32_bit_class", patched(4, "\1", 1), image_len, "64-bit");
    expect("big_endian", patched(5, "\2", 1), image_len, "little-endian");
    u16 = 3; expect("shared_object", patched(16, &u16, 2), image_len, "ET_EXEC");
    u16 = 3; expect("wrong_machine", patched(18, &u16, 2), image_len, "x86-64");
    u16 = 32; expect("bad_phentsize", patched(54, &u16, 2), image_len, "program header");
    u16 = 0xffff; expect("huge_phnum", patched(56, &u16, 2), image_len, "outside the file");
    u64 = ~0ull - 8; expect("phoff_overflow", patched(32, &u64, 8), image_len, "outside the file");
    u64 = ~0ull; expect("segment_offset_overflow", patched(PH(L, P_OFFSET), &u64, 8), image_len, "outside the file");
    u64 = 1ull << 40; expect("segment_filesz_beyond_memsz", patched(PH(L, P_FILESZ), &u64, 8), image_len, "file size");
    u64 = 0x1000; expect("segment_below_user_range", patched(PH(L, P_VADDR), &u64, 8), image_len, "address range");
    u64 = 0xffffffff80000000ull; expect("segment_in_kernel_half", patched(PH(L, P_VADDR), &u64, 8), image_len, "address range");
    u64 = ~0ull - 4; expect("segment_size_wraps", patched(PH(L, P_MEMSZ), &u64, 8), image_len, "address range");
    u32 = 3; expect("interpreter_requested", patched(PH(L, P_TYPE), &u32, 4), image_len, "dynamically linked");
    u64 = 0x10; expect("entry_outside_code", patched(24, &u64, 8), image_len, "entry point");

    /* 20000 random corruptions: whatever the verdict, never a read outside the image. */
    srand(1);
    int loadable = 0;
    for (int i = 0; i < 20000; i++) {
        uint8_t *p = malloc(image_len);
        memcpy(p, image, image_len);
        for (int k = 0; k < 4; k++)
            p[rand() % (PHOFF + 56 * 8 < image_len ? PHOFF + 56 * 8 : image_len)] = (uint8_t)rand();
        size_t len = rand() % 4 ? image_len : (size_t)rand() % image_len;
        loadable += parse(p, len) == NULL;
        free(p);
    }
    printf("PASS random_corruptions_never_read_outside (%d of 20000 still loadable)\n", loadable);
    return failures != 0;
}
