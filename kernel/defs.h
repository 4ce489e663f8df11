/* defs.h: every kernel function that crosses a file, grouped by the file that defines it. */
#ifndef NOM_DEFS_H
#define NOM_DEFS_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "layout.h"
#include "nom/abi.h"

struct cpu;
struct ctx;
struct app;
struct trapframe;
struct pci_dev;

#define PAGE_SIZE 4096ull
#define PAGE_ROUND_DOWN(a) ((a) & ~(PAGE_SIZE - 1))
#define PAGE_ROUND_UP(a) (((a) + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define P2V(pa) ((void *)((uint64_t)(pa) + DIRECT_MAP))
#define V2P(va) ((uint64_t)(va) - DIRECT_MAP)
#define KERNEL_V2P(va) ((uint64_t)(va) - KERNEL_VMA)

/* string.c */
void *memset(void *dst, int c, size_t n);
void *memcpy(void *dst, const void *src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
size_t strnlen(const char *s, size_t max);
int strncmp(const char *a, const char *b, size_t n);
char *strncpy0(char *dst, const char *src, size_t size);
uint64_t parse_u64(const char *s, const char **end);

/* printf.c */
int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);
int snprintf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* console.c */
void console_init(void);
void console_write(const char *s, size_t n);
void kprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
_Noreturn void panic(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void qemu_exit(uint32_t value);

/* spinlock.c: one big kernel lock; held whenever the kernel runs with shared state. */
void klock_acquire(void);
void klock_release(void);

/* multiboot.c */
struct boot_module { uint64_t start, end; const char *cmdline; };
struct boot_info {
    const char *cmdline;
    uint64_t rsdp_phys;
    int nmodules;
    struct boot_module modules[16];
};
void multiboot_parse(uint64_t mbi_phys, struct boot_info *bi);
void multiboot_reserve_and_free_memory(uint64_t mbi_phys, const struct boot_info *bi);
uint64_t multiboot_max_phys(uint64_t mbi_phys);

/* frame.c: physical frames (4 KiB) */
#include "frame.h"

/* vm.c: page tables */
#define PTE_P   0x001ull
#define PTE_W   0x002ull
#define PTE_U   0x004ull
#define PTE_PWT 0x008ull
#define PTE_PCD 0x010ull
#define PTE_PS  0x080ull
#define PTE_G   0x100ull
#define PTE_NX  (1ull << 63)
#define PTE_ADDR 0x000ffffffffff000ull
/* Software bits: what a user page is, so unmap knows what it may free. */
#define PTE_SW_FRAME  0x200ull /* owns its frame (free on unmap) */
#define PTE_SW_DEVICE 0x400ull /* device MMIO, not owned */
void vm_init(uint64_t max_phys);
uint64_t vm_kernel_pml4(void);
void *vm_map_mmio(uint64_t pa, uint64_t size);
uint64_t vm_new_address_space(void);
void vm_free_address_space(uint64_t pml4);
int vm_map_page(uint64_t pml4, uint64_t va, uint64_t pa, uint64_t flags);
uint64_t *vm_lookup(uint64_t pml4, uint64_t va); /* the PTE, or NULL */
void vm_unmap_page(uint64_t pml4, uint64_t va);
void vm_switch(uint64_t pml4);
void vm_flush_page(uint64_t va);
bool vm_user_range_ok(uint64_t pml4, uint64_t va, uint64_t len, bool write);
int copy_from_user(uint64_t pml4, void *dst, uint64_t uva, uint64_t len);
int copy_to_user(uint64_t pml4, uint64_t uva, const void *src, uint64_t len);

/* cpu.c */
void cpu_init_boot(void);
/* Intel family 6 or AMD family 0xf and later: an AP starts without the MP specification's
 * delays (lapic.c, lapic_send_init_sipi). */
bool cpu_modern_ap_start(void);
void cpu_init_this(struct cpu *c);
void fpu_init_this(void);
void fpu_save(void *area);
void fpu_restore(const void *area);
extern uint64_t fpu_area_size;
extern uint8_t fpu_initial_state[];
extern bool smap_on;
static inline uint64_t rdtsc(void) {
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}
static inline void outb(uint16_t port, uint8_t v) { __asm__ volatile("outb %0, %1" ::"a"(v), "Nd"(port)); }
static inline uint8_t inb(uint16_t port) { uint8_t v; __asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port)); return v; }
static inline void outl(uint16_t port, uint32_t v) { __asm__ volatile("outl %0, %1" ::"a"(v), "Nd"(port)); }
static inline uint32_t inl(uint16_t port) { uint32_t v; __asm__ volatile("inl %1, %0" : "=a"(v) : "Nd"(port)); return v; }
/* a * b / c with a 128-bit intermediate; the quotient must fit in 64 bits. */
static inline uint64_t muldiv64(uint64_t a, uint64_t b, uint64_t c) {
    uint64_t q, r;
    __asm__("mulq %3; divq %4" : "=a"(q), "=&d"(r) : "a"(a), "rm"(b), "rm"(c) : "cc");
    return q;
}
uint64_t rdmsr(uint32_t msr);
void wrmsr(uint32_t msr, uint64_t v);
struct cpu *this_cpu(void);
void cpu_set_io_bitmap(struct cpu *c, const uint8_t *bitmap); /* NULL: no ports */

/* trap.c */
void trap_init(void);
void trap_dispatch(struct trapframe *tf);
void trap_exit_to_user(struct trapframe *tf);
void dump_trapframe(const struct trapframe *tf);
int irq_alloc_vector(void);
void irq_free_vector(int vector);

/* acpi.c */
int acpi_find_cpus(uint64_t rsdp_phys, uint32_t *apic_ids, int max, uint64_t *lapic_phys);
uint64_t acpi_find_dmar(uint64_t rsdp_phys);

/* lapic.c: local APIC, its timer, and the TSC */
void lapic_init_boot(uint64_t lapic_phys);
void lapic_init_this(void);
uint32_t lapic_id(void);
void lapic_eoi(void);
void lapic_send_ipi(uint32_t apic_id, uint32_t vector);
void lapic_send_init_sipi(uint32_t apic_id, uint32_t start_page);
void lapic_timer_deadline(uint64_t deadline_tsc); /* 0: stop the timer */
uint64_t tsc_hz(void);
uint64_t tsc_to_ns(uint64_t ticks);
void udelay(uint64_t us);

/* rtc.c */
uint64_t rtc_unix_seconds(void);

/* smp.c */
void smp_boot_aps(const uint32_t *apic_ids, int n);
_Noreturn void ap_main(struct cpu *c);

/* pci.c */
void pci_init(void);
uint32_t pci_config_read(const struct pci_dev *d, uint32_t off, uint32_t size);
void pci_config_write(const struct pci_dev *d, uint32_t off, uint32_t size, uint32_t v);
struct pci_dev *pci_device(uint32_t index);
uint32_t pci_device_count(void);
int pci_reset_for_owner(struct pci_dev *d);
void pci_quiesce(struct pci_dev *d);
int pci_msix_program(struct pci_dev *d, uint32_t entry, uint32_t apic_id, uint32_t vector);
void pci_msix_disable(struct pci_dev *d);
bool pci_msix_page(const struct pci_dev *d, uint64_t pa);
bool pci_config_write_allowed(const struct pci_dev *d, uint32_t off, uint32_t size, uint32_t v);

/* bb.c: the bulletin board */
void bb_init(void);
struct nom_bb *bb_begin_write(void);
void bb_end_write(void);
uint64_t bb_phys(void);
void bb_log_all(void);

/* elf.c */
#include "elf.h"

/* app.c */
void apps_start_modules(const struct boot_info *bi);
struct app *app_by_id(uint32_t id);
void app_kill(struct app *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void app_exit(struct app *a, int64_t status);
void app_reap_context(struct ctx *c);
void app_publish(struct app *a);
void app_publish_cpu_time(struct app *a);
#define MEM_KERNEL_RESERVE 1024 /* frames applications cannot take: page tables, contexts */
bool app_may_take(const struct app *a, uint64_t npages);

/* sched.c */
void sched_init_cpu(struct cpu *c);
void sched_add(struct ctx *c);
void sched_remove(struct ctx *c);
void ctx_free(struct ctx *c);
void sched_wake(struct ctx *c, uint32_t why);
void schedule(void);
_Noreturn void sched_idle_loop(void);
void sched_timer_tick(void);
void sched_reprogram_timer(void);
void sched_kick_cpu(int cpu);
struct ctx *ctx_create(struct app *a, int cpu, uint64_t entry, uint64_t stack_top, uint64_t arg);
int sched_pick_cpu(bool need_free);
#define SYNC_TLB   0x1u /* page-table entries of the application were removed or narrowed */
#define SYNC_IOMAP 0x2u /* its I/O bitmap changed */
#define SYNC_DROP_AS 0x4u /* the address space this idle CPU kept loaded is about to be freed */
void sched_sync_app(struct app *a, uint32_t what);
void sched_sync_apply(struct cpu *cpu);
void sched_sync_poll(void);
void sched_forget_app(struct app *a);
void sched_enter_kernel(void);

/* syscall.c */
void syscall_init_this(void);
uint64_t syscall_dispatch(struct trapframe *tf);

/* upcall.c */
bool upcall_pending(const struct ctx *c);
void upcall_deliver_pending(struct ctx *c, struct trapframe *tf);
bool upcall_page_fault(struct ctx *c, struct trapframe *tf, uint64_t addr, uint64_t err);
int upcall_return(struct ctx *c, struct trapframe *tf, uint64_t frame_va);

/* device.c */
int device_acquire(struct app *a, uint32_t index, uint64_t grant_uva);
int device_release(struct app *a, uint32_t index);
void device_release_all(struct app *a);
int device_irq_attach(struct ctx *c, uint32_t index, uint32_t entry, uint64_t cookie);
void device_irq(int vector);
void device_ctx_gone(struct ctx *c);

/* iommu.c: DMA remapping (VT-d) where the machine has one; every call is a no-op without */
void iommu_init(uint64_t rsdp_phys);
bool iommu_on(void);
int iommu_attach(struct app *a, const struct pci_dev *d);
void iommu_detach(const struct pci_dev *d);
int iommu_map_frame(struct app *a, uint64_t pa);
void iommu_unmap_frame(struct app *a, uint64_t pa);
void iommu_flush(struct app *a);
void iommu_app_gone(struct app *a);
void iommu_fault_irq(void);

#endif
