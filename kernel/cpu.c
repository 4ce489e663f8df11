/* cpu.c: per-CPU descriptor tables (GDT, TSS with an I/O bitmap), the shared IDT, GS base,
 * and the FPU/SSE/AVX state that every context saves and restores (Intel SDM vol. 3, ch. 3, 6,
 * 7, 13). The kernel itself never uses the FPU (-mgeneral-regs-only). */
#include "defs.h"
#include "cpu.h"

struct cpu cpus[MAX_CPUS];
int ncpus = 1;

struct idt_entry {
    uint16_t off_lo, sel;
    uint8_t ist, type;
    uint16_t off_mid;
    uint32_t off_hi, zero;
} __attribute__((packed));

static struct idt_entry idt[256] __attribute__((aligned(16)));
extern const uint64_t isr_table[256];

uint64_t fpu_area_size = 512;
static bool have_xsave;
bool smap_on;
static uint64_t xcr0;
uint8_t fpu_initial_state[4096] __attribute__((aligned(64)));

uint64_t rdmsr(uint32_t msr) {
    uint32_t lo, hi;
    __asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
    return ((uint64_t)hi << 32) | lo;
}

void wrmsr(uint32_t msr, uint64_t v) {
    __asm__ volatile("wrmsr" ::"c"(msr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32)));
}

struct cpu *this_cpu(void) {
    struct cpu *c;
    __asm__ volatile("movq %%gs:0, %0" : "=r"(c));
    return c;
}

static void cpuid(uint32_t leaf, uint32_t sub, uint32_t r[4]) {
    __asm__ volatile("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3]) : "a"(leaf), "c"(sub));
}

static void idt_set(int v, uint64_t handler, uint8_t dpl) {
    idt[v] = (struct idt_entry){
        .off_lo = handler & 0xffff, .sel = SEL_KCODE, .ist = 0,
        .type = 0x8e | (dpl << 5), /* present, 64-bit interrupt gate (IF cleared on entry) */
        .off_mid = (handler >> 16) & 0xffff, .off_hi = handler >> 32, .zero = 0};
}

void cpu_init_boot(void) {
    for (int v = 0; v < 256; v++)
        idt_set(v, isr_table[v], 0);
}

static void gdt_load(struct cpu *c) {
    c->gdt[0] = 0;
    c->gdt[1] = 0x00af9a000000ffff; /* kernel code, 64-bit */
    c->gdt[2] = 0x00cf92000000ffff; /* kernel data */
    c->gdt[3] = 0x00cff2000000ffff; /* user data (DPL 3) */
    c->gdt[4] = 0x00affa000000ffff; /* user code, 64-bit (DPL 3) */
    uint64_t base = (uint64_t)&c->tss, limit = sizeof(struct tss) - 1;
    c->gdt[5] = (limit & 0xffff) | ((base & 0xffffff) << 16) | (0x89ull << 40) |
                (((limit >> 16) & 0xf) << 48) | (((base >> 24) & 0xff) << 56);
    c->gdt[6] = base >> 32;
    struct { uint16_t limit; uint64_t base; } __attribute__((packed)) gdtr = {sizeof c->gdt - 1, (uint64_t)c->gdt};
    struct { uint16_t limit; uint64_t base; } __attribute__((packed)) idtr = {sizeof idt - 1, (uint64_t)idt};
    __asm__ volatile("lgdt %0; lidt %1" ::"m"(gdtr), "m"(idtr));
    __asm__ volatile("movw $0x10, %%ax; movw %%ax, %%ds; movw %%ax, %%es; movw %%ax, %%ss;"
                     "pushq $0x08; leaq 1f(%%rip), %%rax; pushq %%rax; lretq; 1:" ::: "rax", "memory");
    __asm__ volatile("movw %0, %%ax; ltr %%ax" ::"i"(SEL_TSS) : "rax");
}

/* No I/O ports unless the running application was granted some (device_acquire). */
void cpu_set_io_bitmap(struct cpu *c, const uint8_t *bitmap) {
    if (c->io_bitmap_loaded == bitmap)
        return;
    if (bitmap)
        memcpy(c->tss.iomap, bitmap, sizeof c->tss.iomap);
    else
        memset(c->tss.iomap, 0xff, sizeof c->tss.iomap);
    c->io_bitmap_loaded = bitmap;
}

void fpu_init_this(void) {
    uint64_t cr0, cr4;
    __asm__ volatile("movq %%cr0, %0; movq %%cr4, %1" : "=r"(cr0), "=r"(cr4));
    cr0 = (cr0 & ~(1ull << 2)) | (1ull << 1) | (1ull << 5); /* EM off, MP on, NE on */
    cr4 |= (1ull << 9) | (1ull << 10);                      /* OSFXSR, OSXMMEXCPT */
    uint32_t r[4];
    cpuid(1, 0, r);
    have_xsave = r[2] & (1u << 26);
    if (have_xsave)
        cr4 |= 1ull << 18; /* OSXSAVE */
    __asm__ volatile("movq %0, %%cr0; movq %1, %%cr4" ::"r"(cr0), "r"(cr4));
    if (have_xsave) {
        cpuid(0xd, 0, r);
        xcr0 = 0x3 | ((r[0] & 0x4) ? 0x4 : 0); /* x87, SSE, AVX if present */
        __asm__ volatile("xsetbv" ::"c"(0), "a"((uint32_t)xcr0), "d"((uint32_t)(xcr0 >> 32)));
        cpuid(0xd, 0, r);
        fpu_area_size = r[1]; /* size for the features enabled in XCR0 */
        if (fpu_area_size > sizeof fpu_initial_state)
            panic("xsave area of %lu bytes is too big", fpu_area_size);
    }
    __asm__ volatile("fninit");
    uint32_t mxcsr = 0x1f80;
    __asm__ volatile("ldmxcsr %0" ::"m"(mxcsr));
}

void fpu_save(void *area) {
    if (have_xsave)
        __asm__ volatile("xsave64 (%0)" ::"r"(area), "a"((uint32_t)xcr0), "d"((uint32_t)(xcr0 >> 32)) : "memory");
    else
        __asm__ volatile("fxsave64 (%0)" ::"r"(area) : "memory");
}

void fpu_restore(const void *area) {
    if (have_xsave)
        __asm__ volatile("xrstor64 (%0)" ::"r"(area), "a"((uint32_t)xcr0), "d"((uint32_t)(xcr0 >> 32)) : "memory");
    else
        __asm__ volatile("fxrstor64 (%0)" ::"r"(area) : "memory");
}

bool cpu_modern_ap_start(void) {
    uint32_t r[4];
    cpuid(0, 0, r);
    bool intel = r[1] == 0x756e6547 && r[3] == 0x49656e69 && r[2] == 0x6c65746e; /* GenuineIntel */
    bool amd = r[1] == 0x68747541 && r[3] == 0x69746e65 && r[2] == 0x444d4163;   /* AuthenticAMD */
    cpuid(1, 0, r);
    uint32_t family = (r[0] >> 8) & 0xf;
    if (family == 0xf)
        family += (r[0] >> 20) & 0xff; /* extended family */
    return (intel && family == 6) || (amd && family >= 0xf);
}

/* Supervisor-mode execution and access prevention (SDM 4.6), where the CPU has them (QEMU's
 * -cpu max does): ring 0 can then neither run nor touch a user page by its user address, so a
 * kernel bug that follows an application's pointer faults instead of obeying it. The kernel
 * never needs to: it reaches application memory through the direct map after checking the
 * application's page table (vm.c copy_user), so it has no stac/clac windows to open. */
static void protect_from_user_pages(struct cpu *c) {
    uint32_t r[4];
    cpuid(0, 0, r);
    if (r[0] < 7)
        return;
    cpuid(7, 0, r);
    uint64_t cr4;
    __asm__ volatile("movq %%cr4, %0" : "=r"(cr4));
    if (r[1] & (1u << 7))
        cr4 |= 1ull << 20; /* SMEP */
    if (r[1] & (1u << 20))
        cr4 |= 1ull << 21; /* SMAP */
    __asm__ volatile("movq %0, %%cr4" ::"r"(cr4));
    smap_on = r[1] & (1u << 20);
    if (c->index == 0)
        kprintf("nom: smep %s, smap %s\n", (r[1] & (1u << 7)) ? "on" : "absent",
                smap_on ? "on" : "absent");
}

/* Called on each CPU with its struct cpu: tables, GS, FPU, system calls. */
void cpu_init_this(struct cpu *c) {
    c->self = c;
    c->tss.iomap_base = __builtin_offsetof(struct tss, iomap);
    c->tss.iomap_end = 0xff;
    memset(c->tss.iomap, 0xff, sizeof c->tss.iomap);
    gdt_load(c);
    wrmsr(0xc0000101, (uint64_t)c); /* GS base: kernel */
    wrmsr(0xc0000102, 0);           /* kernel GS base: user's (swapgs) */
    fpu_init_this();
    if (c->index == 0) {
        memset(fpu_initial_state, 0, sizeof fpu_initial_state);
        fpu_save(fpu_initial_state);
    }
    syscall_init_this();
    protect_from_user_pages(c);
}
