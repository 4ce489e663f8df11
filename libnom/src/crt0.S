/* crt0.S: the entry of every nom application. The kernel starts it with rsp pointing at a
 * struct nom_start_info (abi.h), 16-byte aligned; nom_start() sets up libnom and calls main. */
    .section .text.start, "ax"
    .globl _start
    .type _start, @function
_start:
    xorl %ebp, %ebp          /* outermost frame, for backtraces */
    movq %rsp, %rdi
    call nom_start
    ud2
    .size _start, . - _start

/* newlib's __libc_init_array/__libc_fini_array call _init/_fini (crti's job elsewhere);
 * nom has only .init_array/.fini_array, so these are empty. */
    .text
    .globl _init, _fini
_init:
_fini:
    ret
    .section .note.GNU-stack, "", @progbits
