/*
 * nom/syscall.h: one inline wrapper per system call of kernel/include/nom/abi.h.
 *
 * Contract: nom_sys_<name>(args) issues the `syscall` instruction with the abi.h convention
 * (number in rax, arguments in rdi, rsi, rdx, r10, r8, r9; rcx and r11 clobbered) and returns
 * the kernel's raw result: >= 0 on success, -NOM_E* (enum nom_error, NOT errno) on failure.
 * The wrappers set no errno and keep no state; the POSIX layer of libnom translates errors
 * (nom_errno_from()). Calls that do not return are marked noreturn.
 */
#ifndef NOM_SYSCALL_H
#define NOM_SYSCALL_H

#include <stdint.h>
#include <nom/abi.h>

static inline int64_t nom_syscall6(uint64_t n, uint64_t a0, uint64_t a1, uint64_t a2,
                                   uint64_t a3, uint64_t a4, uint64_t a5)
{
    register uint64_t r10 __asm__("r10") = a3;
    register uint64_t r8 __asm__("r8") = a4;
    register uint64_t r9 __asm__("r9") = a5;
    int64_t ret;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(n), "D"(a0), "S"(a1), "d"(a2), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return ret;
}

#define NOM_SYSCALL0(n) nom_syscall6((n), 0, 0, 0, 0, 0, 0)
#define NOM_SYSCALL1(n, a) nom_syscall6((n), (uint64_t)(a), 0, 0, 0, 0, 0)
#define NOM_SYSCALL2(n, a, b) nom_syscall6((n), (uint64_t)(a), (uint64_t)(b), 0, 0, 0, 0)
#define NOM_SYSCALL3(n, a, b, c) \
    nom_syscall6((n), (uint64_t)(a), (uint64_t)(b), (uint64_t)(c), 0, 0, 0)
#define NOM_SYSCALL4(n, a, b, c, d) \
    nom_syscall6((n), (uint64_t)(a), (uint64_t)(b), (uint64_t)(c), (uint64_t)(d), 0, 0)

/* Writes len bytes to the serial console; returns bytes written. */
static inline int64_t nom_sys_console_write(const char *buf, uint64_t len)
{ return NOM_SYSCALL2(NOM_SYS_CONSOLE_WRITE, buf, len); }

/* Ends the whole application with status. */
__attribute__((noreturn)) static inline void nom_sys_exit(int64_t status)
{ NOM_SYSCALL1(NOM_SYS_EXIT, status); __builtin_unreachable(); }

/* Maps npages zeroed frames at vaddr. -EINVAL bad range/flags, -EBUSY already mapped, -ENOMEM. */
static inline int64_t nom_sys_mem_map(uint64_t vaddr, uint64_t npages, uint64_t flags)
{ return NOM_SYSCALL3(NOM_SYS_MEM_MAP, vaddr, npages, flags); }

/* Unmaps and frees npages at vaddr (unmapped pages skipped). -EINVAL bad range. */
static inline int64_t nom_sys_mem_unmap(uint64_t vaddr, uint64_t npages)
{ return NOM_SYSCALL2(NOM_SYS_MEM_UNMAP, vaddr, npages); }

/* Changes access of npages mapped pages. -EINVAL, -ENOENT if a page is not mapped. */
static inline int64_t nom_sys_mem_protect(uint64_t vaddr, uint64_t npages, uint64_t flags)
{ return NOM_SYSCALL3(NOM_SYS_MEM_PROTECT, vaddr, npages, flags); }

/* Physical address backing vaddr. -ENOENT if not mapped. */
static inline int64_t nom_sys_virt_to_phys(uint64_t vaddr)
{ return NOM_SYSCALL1(NOM_SYS_VIRT_TO_PHYS, vaddr); }

/* Acquires bulletin-board device bb_index. -EBUSY owned, -ENOENT no such device, -EFAULT. */
static inline int64_t nom_sys_device_acquire(uint32_t bb_index, struct nom_device_grant *out)
{ return NOM_SYSCALL2(NOM_SYS_DEVICE_ACQUIRE, bb_index, out); }

/* Releases an owned device. -EPERM not the owner, -ENOENT. */
static inline int64_t nom_sys_device_release(uint32_t bb_index)
{ return NOM_SYSCALL1(NOM_SYS_DEVICE_RELEASE, bb_index); }

/* Routes MSI-X entry msix_entry of an owned device to NOM_UPCALL_IRQ(cookie). -EPERM, -EINVAL. */
static inline int64_t nom_sys_irq_attach(uint32_t bb_index, uint32_t msix_entry, uint64_t cookie)
{ return NOM_SYSCALL3(NOM_SYS_IRQ_ATTACH, bb_index, msix_entry, cookie); }

/* Registers this context's upcall entry, stack and control word. -EFAULT, -EINVAL. */
static inline int64_t nom_sys_upcall_register(uint64_t entry, uint64_t stack_top,
                                              struct nom_upcall_ctl *ctl)
{ return NOM_SYSCALL3(NOM_SYS_UPCALL_REGISTER, entry, stack_top, ctl); }

/* Resumes the context saved in frame and re-enables upcalls. */
__attribute__((noreturn)) static inline void
nom_sys_upcall_return(const struct nom_upcall_frame *frame)
{ NOM_SYSCALL1(NOM_SYS_UPCALL_RETURN, frame); __builtin_unreachable(); }

/* Starts a new context at entry(arg) on a free vCPU; returns its cpu index. -EBUSY none free. */
static inline int64_t nom_sys_core_acquire(uint64_t entry, uint64_t stack_top, uint64_t arg)
{ return NOM_SYSCALL3(NOM_SYS_CORE_ACQUIRE, entry, stack_top, arg); }

/* Ends the calling context (the last one's release is exit(0)). */
__attribute__((noreturn)) static inline void nom_sys_core_release(void)
{ NOM_SYSCALL0(NOM_SYS_CORE_RELEASE); __builtin_unreachable(); }

/* Lets another runnable context use this vCPU. */
static inline int64_t nom_sys_yield(void)
{ return NOM_SYSCALL0(NOM_SYS_YIELD); }

/* Sleeps until an IRQ, a notification or deadline_tsc (0: none); returns NOM_WAKE_* bits. */
static inline int64_t nom_sys_block(uint64_t deadline_tsc)
{ return NOM_SYSCALL2(NOM_SYS_BLOCK, deadline_tsc, 0); }
/* The same, handing the pending events over in *ev instead of as upcalls (abi.h). */
static inline int64_t nom_sys_block_events(uint64_t deadline_tsc, struct nom_wake_events *ev)
{ return NOM_SYSCALL2(NOM_SYS_BLOCK, deadline_tsc, ev); }

/* Arms one NOM_UPCALL_TIMER at deadline_tsc (0 cancels). */
static inline int64_t nom_sys_timer_set(uint64_t deadline_tsc)
{ return NOM_SYSCALL1(NOM_SYS_TIMER_SET, deadline_tsc); }

/* ORs bits into application app_id's notification word. -ENOENT no such application. */
static inline int64_t nom_sys_notify(uint32_t app_id, uint64_t bits)
{ return NOM_SYSCALL2(NOM_SYS_NOTIFY, app_id, bits); }

/* Publishes a price in slot (price publisher only). -EPERM, -EINVAL, -EFAULT. */
static inline int64_t nom_sys_price_publish(uint32_t slot, const struct nom_bb_price *price)
{ return NOM_SYSCALL2(NOM_SYS_PRICE_PUBLISH, slot, price); }

/* Sets the caller's own row on the bulletin board. -EFAULT. */
static inline int64_t nom_sys_app_report(const struct nom_bb_app_report *report)
{ return NOM_SYSCALL1(NOM_SYS_APP_REPORT, report); }

/* Reads PCI config space of an owned device. -EPERM, -EINVAL. */
static inline int64_t nom_sys_pci_config_read(uint32_t bb_index, uint32_t offset, uint32_t size)
{ return NOM_SYSCALL3(NOM_SYS_PCI_CONFIG_READ, bb_index, offset, size); }

/* Writes PCI config space of an owned device. -EPERM (BARs, MSI-X), -EINVAL. */
static inline int64_t nom_sys_pci_config_write(uint32_t bb_index, uint32_t offset,
                                               uint32_t size, uint32_t value)
{ return NOM_SYSCALL4(NOM_SYS_PCI_CONFIG_WRITE, bb_index, offset, size, value); }

/* Sets the calling context's FS base (thread pointer). -EINVAL if not a canonical user address. */
static inline int64_t nom_sys_set_fs_base(uint64_t base)
{ return NOM_SYSCALL1(NOM_SYS_SET_FS_BASE, base); }

/* errno value (newlib's) for a -NOM_E* result; 0 for results >= 0. */
int nom_errno_from(int64_t result);

#endif /* NOM_SYSCALL_H */
