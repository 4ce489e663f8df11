/* entry.S: every way into and out of the kernel. Interrupts, exceptions and system calls all
 * build the same struct trapframe (cpu.h) on the running context's kernel stack, so there is one
 * way back to ring 3 (iretq), plus sysretq as the fast path for system calls whose frame the
 * kernel did not redirect (Intel SDM 5.8.8). GS holds struct cpu in the kernel (swapgs). */

#define PUSH_REGS \
    pushq %rax; pushq %rbx; pushq %rcx; pushq %rdx; pushq %rsi; pushq %rdi; pushq %rbp; \
    pushq %r8; pushq %r9; pushq %r10; pushq %r11; pushq %r12; pushq %r13; pushq %r14; pushq %r15
#define POP_REGS \
    popq %r15; popq %r14; popq %r13; popq %r12; popq %r11; popq %r10; popq %r9; popq %r8; \
    popq %rbp; popq %rdi; popq %rsi; popq %rdx; popq %rcx; popq %rbx; popq %rax

/* Vectors whose exception pushes an error code (SDM 6.13). */
#define HAS_ERROR(v) ((v) == 8 || ((v) >= 10 && (v) <= 14) || (v) == 17 || (v) == 21 || (v) == 29 || (v) == 30)

    .text
    .altmacro
.macro isr_stub v
isr_\v:
    .if !((\v == 8) || ((\v >= 10) && (\v <= 14)) || (\v == 17) || (\v == 21) || (\v == 29) || (\v == 30))
    pushq $0
    .endif
    pushq $\v
    jmp isr_common
.endm

.set i, 0
.rept 256
    isr_stub %i
    .set i, i + 1
.endr

.macro isr_addr v
    .quad isr_\v
.endm
    .section .rodata
    .globl isr_table
isr_table:
.set i, 0
.rept 256
    isr_addr %i
    .set i, i + 1
.endr

    .text
isr_common:
    testq $3, 24(%rsp)          /* cs of the interrupted code: from ring 3? */
    jz 1f
    swapgs
1:  PUSH_REGS
    cld
    movq %rsp, %rdi
    call trap_dispatch
    .globl trap_return
trap_return:                    /* rsp = struct trapframe */
    POP_REGS
    addq $16, %rsp              /* vector, error */
    testq $3, 8(%rsp)
    jz 2f
    swapgs
2:  iretq

/* syscall: rcx = user rip, r11 = user rflags, IF cleared by FMASK. */
    .globl syscall_entry
syscall_entry:
    swapgs
    movq %rsp, %gs:16           /* cpu->user_rsp */
    movq %gs:8, %rsp            /* cpu->kstack_top */
    pushq $0x1b                 /* ss: SEL_UDATA */
    pushq %gs:16                /* rsp */
    pushq %r11                  /* rflags */
    pushq $0x23                 /* cs: SEL_UCODE */
    pushq %rcx                  /* rip */
    pushq $0                    /* error */
    pushq $0x100                /* vector: marks a system call */
    PUSH_REGS
    cld
    movq %rsp, %rdi
    call syscall_dispatch       /* 0: sysret fast path; else the frame was redirected */
    testq %rax, %rax
    jnz trap_return
    POP_REGS                    /* syscall_dispatch set rcx = rip, r11 = rflags */
    movq 40(%rsp), %rsp         /* skip vector, error, rip, cs, rflags: user rsp */
    swapgs
    sysretq

/* void switch_stack(uint64_t *save_ksp, uint64_t next_ksp): callee-saved registers only. */
    .globl switch_stack
switch_stack:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret

/* First run of a new context: switch_stack "returns" here with rsp = its trapframe. */
    .globl ctx_first_entry
ctx_first_entry:
    call ctx_first_run
    jmp trap_return

    .section .note.GNU-stack,"",@progbits
