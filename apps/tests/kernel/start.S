/* start.S: entry of a kernel test application: rsp points to struct nom_start_info (abi.h). */
    .section .note.GNU-stack,"",@progbits
    .text
    .globl _start
_start:
    movq %rsp, %rdi
    andq $-16, %rsp
    call ktest_start
    ud2
