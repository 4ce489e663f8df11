/* ap_boot.S: the trampoline an application processor starts in after INIT-SIPI-SIPI (real
 * mode, at AP_TRAMPOLINE). smp.c copies it there and fills the three variables at its end; it
 * goes to long mode on the kernel's page table and jumps to ap_entry64 in the higher half. */
#define AP_TRAMPOLINE 0x8000
#define ABS(x) ((x) - ap_trampoline_start + AP_TRAMPOLINE)

    .section .rodata
    .code16
    .globl ap_trampoline_start, ap_trampoline_end
    .globl ap_tramp_pml4, ap_tramp_stack, ap_tramp_cpu
ap_trampoline_start:
    cli
    cld
    xorw %ax, %ax
    movw %ax, %ds
    lgdtl ABS(tramp_gdt_ptr)
    movl %cr0, %eax
    orl $1, %eax
    movl %eax, %cr0
    ljmpl $0x08, $ABS(pm32)

    .code32
pm32:
    movw $0x10, %ax
    movw %ax, %ds
    movw %ax, %es
    movw %ax, %ss
    movl %cr4, %eax
    orl $0x20, %eax             /* PAE */
    movl %eax, %cr4
    movl ABS(ap_tramp_pml4), %eax
    movl %eax, %cr3
    movl $0xc0000080, %ecx
    rdmsr
    orl $0x900, %eax            /* LME, NXE */
    wrmsr
    movl %cr0, %eax
    orl $0x80010000, %eax       /* PG, WP */
    movl %eax, %cr0
    ljmpl $0x18, $ABS(lm64)

    .code64
lm64:
    movw $0x10, %ax
    movw %ax, %ds
    movw %ax, %es
    movw %ax, %ss
    movq ABS(ap_tramp_stack), %rsp
    movq ABS(ap_tramp_cpu), %rdi
    movabsq $ap_main, %rax
    xorl %ebp, %ebp
    callq *%rax

    .balign 8
tramp_gdt:
    .quad 0
    .quad 0x00cf9a000000ffff    /* 0x08: 32-bit code */
    .quad 0x00cf92000000ffff    /* 0x10: data */
    .quad 0x00af9a000000ffff    /* 0x18: 64-bit code */
tramp_gdt_ptr:
    .short tramp_gdt_ptr - tramp_gdt - 1
    .long ABS(tramp_gdt)
    .balign 8
ap_tramp_pml4:  .quad 0
ap_tramp_stack: .quad 0
ap_tramp_cpu:   .quad 0
ap_trampoline_end:

    .section .note.GNU-stack,"",@progbits
