/* multiboot.c: reads what GRUB hands over (multiboot2 spec 3.6): the kernel command line, the
 * memory map, the application modules with their command lines, and the ACPI RSDP. */
#include "defs.h"

#define TAG_END 0
#define TAG_CMDLINE 1
#define TAG_MODULE 3
#define TAG_MMAP 6
#define TAG_ACPI_OLD 14
#define TAG_ACPI_NEW 15

struct tag { uint32_t type, size; };
struct mmap_entry { uint64_t addr, len; uint32_t type, reserved; };

extern char _kernel_phys_start[], _kernel_phys_end[];

#define FOR_EACH_TAG(t, mbi_phys)                                                     \
    for (const struct tag *t = (const struct tag *)((uint8_t *)P2V(mbi_phys) + 8);     \
         t->type != TAG_END;                                                           \
         t = (const struct tag *)((const uint8_t *)t + ((t->size + 7) & ~7u)))

void multiboot_parse(uint64_t mbi_phys, struct boot_info *bi) {
    memset(bi, 0, sizeof *bi);
    bi->cmdline = "";
    FOR_EACH_TAG(t, mbi_phys) {
        const uint8_t *body = (const uint8_t *)(t + 1);
        if (t->type == TAG_CMDLINE) {
            bi->cmdline = (const char *)body;
        } else if (t->type == TAG_MODULE && bi->nmodules < (int)ARRAY_SIZE(bi->modules)) {
            struct boot_module *m = &bi->modules[bi->nmodules++];
            m->start = ((const uint32_t *)body)[0];
            m->end = ((const uint32_t *)body)[1];
            m->cmdline = (const char *)(body + 8);
        } else if ((t->type == TAG_ACPI_NEW) || (t->type == TAG_ACPI_OLD && !bi->rsdp_phys)) {
            bi->rsdp_phys = V2P(body);
        }
    }
}

static uint64_t mbi_size(uint64_t mbi_phys) {
    return *(const uint32_t *)P2V(mbi_phys);
}

/* Calls fn for every available-RAM range of the memory map. */
static void for_each_ram_range(uint64_t mbi_phys, void (*fn)(uint64_t start, uint64_t end, void *arg),
                               void *arg) {
    FOR_EACH_TAG(t, mbi_phys) {
        if (t->type != TAG_MMAP)
            continue;
        uint32_t entry_size = ((const uint32_t *)(t + 1))[0];
        const uint8_t *p = (const uint8_t *)(t + 1) + 8, *end = (const uint8_t *)t + t->size;
        for (; entry_size && p + entry_size <= end; p += entry_size) {
            const struct mmap_entry *e = (const struct mmap_entry *)p;
            if (e->type == 1)
                fn(e->addr, e->addr + e->len, arg);
        }
    }
}

static void free_range(uint64_t start, uint64_t end, void *arg) {
    (void)arg;
    frame_free_range(start, end);
}

static void track_max(uint64_t start, uint64_t end, void *arg) {
    (void)start;
    uint64_t *max = arg;
    if (end > *max)
        *max = end;
}

/* Every available RAM range becomes free frames, except what is in use: the first MiB (BIOS,
 * the AP trampoline), the kernel image, the multiboot information and the modules. */
void multiboot_reserve_and_free_memory(uint64_t mbi_phys, const struct boot_info *bi) {
    for_each_ram_range(mbi_phys, free_range, NULL);
    frame_reserve_range(0, 0x100000);
    frame_reserve_range((uint64_t)_kernel_phys_start, (uint64_t)_kernel_phys_end);
    frame_reserve_range(mbi_phys, mbi_phys + mbi_size(mbi_phys));
    for (int i = 0; i < bi->nmodules; i++)
        frame_reserve_range(bi->modules[i].start, bi->modules[i].end);
}

/* The highest RAM address in the memory map. */
uint64_t multiboot_max_phys(uint64_t mbi_phys) {
    uint64_t max = 0;
    for_each_ram_range(mbi_phys, track_max, &max);
    return max;
}
