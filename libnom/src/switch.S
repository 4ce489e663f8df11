/* switch.S: the few things C cannot do: switching user-thread stacks, a new thread's first
 * frame, the preemption trampoline, and the upcall entry (abi.h, struct nom_upcall_frame).
 * Offsets: struct nom_thread.saved_rsp is at 0 (libnom.h). */
#define SYS_UPCALL_RETURN 10 /* NOM_SYS_UPCALL_RETURN, abi.h */

    .text

/* void nom_switch(struct nom_thread *from, struct nom_thread *to)
 * Cooperative switch: only the SysV callee-saved state needs saving (rbx, rbp, r12-r15, the
 * x87 control word and MXCSR); the caller already assumes everything else is clobbered. */
    .globl nom_switch
    .type nom_switch, @function
nom_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    subq $16, %rsp
    stmxcsr 8(%rsp)
    fnstcw (%rsp)
    movq %rsp, (%rdi)
    movq (%rsi), %rsp
    fldcw (%rsp)
    ldmxcsr 8(%rsp)
    addq $16, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size nom_switch, . - nom_switch

/* First "return" of a new thread (thread.c builds its stack so that nom_switch returns
 * here): align the stack as for a call and enter thread_entry(), which never returns. */
    .globl nom_thread_trampoline
    .type nom_thread_trampoline, @function
nom_thread_trampoline:
    andq $-16, %rsp
    call thread_entry
    ud2
    .size nom_thread_trampoline, . - nom_thread_trampoline

/* void nom_call_on_stack(void (*fn)(void *), void *arg, uintptr_t top): runs fn(arg) on
 * the stack ending at top (16-byte aligned) and never returns: the main thread leaves the
 * kernel-made start-up stack for a growable reservation (thread.c). */
    .globl nom_call_on_stack
    .type nom_call_on_stack, @function
nom_call_on_stack:
    movq %rdx, %rsp
    movq %rdi, %rax
    movq %rsi, %rdi
    xorl %ebp, %ebp
    call *%rax
    ud2
    .size nom_call_on_stack, . - nom_call_on_stack

/* Preemption, injected by the upcall handler into a preemptible thread (upcall.c): the handler
 * leaves the 128-byte red zone alone, pushes the interrupted rip below it and resumes here.
 * Every register is then still the thread's, so save them all (flags, the caller-saved GPRs
 * and the whole x87/SSE state with fxsave), call into the scheduler as if the thread had
 * called nom_yield(), restore, and `ret $128` back over the red zone to the interrupted rip. */
    .globl nom_preempt_trampoline
    .type nom_preempt_trampoline, @function
nom_preempt_trampoline:
    pushfq
    pushq %rax
    pushq %rcx
    pushq %rdx
    pushq %rsi
    pushq %rdi
    pushq %r8
    pushq %r9
    pushq %r10
    pushq %r11
    pushq %rbx
    movq %rsp, %rbx
    andq $-16, %rsp
    subq $512, %rsp
    fxsave64 (%rsp)
    cld
    call nom_sched_preempt_point
    fxrstor64 (%rsp)
    movq %rbx, %rsp
    popq %rbx
    popq %r11
    popq %r10
    popq %r9
    popq %r8
    popq %rdi
    popq %rsi
    popq %rdx
    popq %rcx
    popq %rax
    popfq
    ret $128
    .size nom_preempt_trampoline, . - nom_preempt_trampoline

/* Upcall entry: rdi = frame, on the upcall stack. abi.h leaves the FPU/SSE state to us and C
 * code may use SSE, so save it around the dispatcher, then resume from frame->regs (which the
 * dispatcher may have edited) with NOM_SYS_UPCALL_RETURN. */
    .globl nom_upcall_entry
    .type nom_upcall_entry, @function
nom_upcall_entry:
    movq %rdi, %rbx
    andq $-16, %rsp
    subq $512, %rsp
    fxsave64 (%rsp)
    cld
    call nom_upcall_dispatch
    fxrstor64 (%rsp)
    movq %rbx, %rdi
    movl $SYS_UPCALL_RETURN, %eax
    syscall
    ud2
    .size nom_upcall_entry, . - nom_upcall_entry

    .section .note.GNU-stack, "", @progbits
