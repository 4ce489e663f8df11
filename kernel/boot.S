/* boot.S: multiboot2 header and the 32-bit entry GRUB jumps to. Builds the early page tables
 * (the first GiB at 0, at DIRECT_MAP and at KERNEL_VMA), switches to long mode and
 * calls kmain(multiboot2 info physical address) on the boot stack, in the higher half.
 * Multiboot2 spec 3.1 (header), 3.3 (machine state at entry: eax = magic, ebx = info). */
#include "layout.h"

#define MB2_MAGIC 0xe85250d6
#define MB2_ARCH_I386 0

    .section .multiboot, "a"
    .balign 8
mb2_header:
    .long MB2_MAGIC
    .long MB2_ARCH_I386
    .long mb2_header_end - mb2_header
    .long -(MB2_MAGIC + MB2_ARCH_I386 + (mb2_header_end - mb2_header))
    /* end tag */
    .balign 8
    .short 0
    .short 0
    .long 8
mb2_header_end:

    .section .boot.bss, "aw", @nobits
    .balign 4096
boot_pml4:      .skip 4096
boot_pdpt_low:  .skip 4096
boot_pdpt_high: .skip 4096
boot_pd:        .skip 4096

    .section .boot.data, "aw"
    .balign 16
boot_gdt:
    .quad 0
    .quad 0x00af9a000000ffff    /* 0x08: 64-bit code, ring 0 */
    .quad 0x00cf92000000ffff    /* 0x10: data, ring 0 */
boot_gdt_end:
boot_gdt_ptr:
    .short boot_gdt_end - boot_gdt - 1
    .long boot_gdt
boot_mbi:
    .long 0

    .section .boot.text, "ax"
    .code32
    .globl _start
_start:
    cli
    cld
    cmpl $0x36d76289, %eax
    jne no_multiboot
    movl %ebx, boot_mbi

    /* PD: 512 x 2 MiB identity pages covering the first GiB. */
    movl $boot_pd, %edi
    xorl %ecx, %ecx
1:  movl %ecx, %eax
    shll $21, %eax
    orl $0x83, %eax             /* present, writable, 2 MiB page */
    movl %eax, (%edi,%ecx,8)
    movl $0, 4(%edi,%ecx,8)
    incl %ecx
    cmpl $512, %ecx
    jne 1b

    movl $boot_pd, %eax
    orl $0x3, %eax
    movl %eax, boot_pdpt_low            /* 0..1 GiB */
    movl %eax, boot_pdpt_high + 510*8   /* KERNEL_VMA .. +1 GiB */
    movl $boot_pdpt_low, %eax
    orl $0x3, %eax
    movl %eax, boot_pml4
    movl %eax, boot_pml4 + 256*8        /* DIRECT_MAP .. +1 GiB (vm.c extends it) */
    movl $boot_pdpt_high, %eax
    orl $0x3, %eax
    movl %eax, boot_pml4 + 511*8

    movl %cr4, %eax
    orl $0x20, %eax             /* PAE */
    movl %eax, %cr4
    movl $boot_pml4, %eax
    movl %eax, %cr3
    movl $0xc0000080, %ecx      /* EFER: long mode enable, no-execute enable */
    rdmsr
    orl $0x900, %eax
    wrmsr
    movl %cr0, %eax
    orl $0x80010001, %eax       /* PG, WP, PE */
    movl %eax, %cr0
    lgdt boot_gdt_ptr
    ljmp $0x08, $long_mode_low

no_multiboot:
    hlt
    jmp no_multiboot

    .code64
long_mode_low:
    movw $0x10, %ax
    movw %ax, %ds
    movw %ax, %es
    movw %ax, %ss
    xorw %ax, %ax
    movw %ax, %fs
    movw %ax, %gs
    movabsq $long_mode_high, %rax
    jmp *%rax

    .text
long_mode_high:
    movabsq $boot_stack_top, %rsp
    xorl %ebp, %ebp
    movl boot_mbi, %edi
    call kmain
2:  cli
    hlt
    jmp 2b

    .bss
    .balign 16
    .globl boot_stack_top
boot_stack:
    .skip BOOT_STACK_SIZE
boot_stack_top:

/* Exposed for vm.c: the boot PML4 becomes the kernel's page table. */
    .section .boot.data
    .globl boot_pml4_phys
boot_pml4_phys:
    .quad boot_pml4

    .section .note.GNU-stack,"",@progbits
