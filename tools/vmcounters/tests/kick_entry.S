/* kick_entry: multiboot (v1) entry of the kick guest (kick_guest.c): a stack, then C. */
    .text
    .align 4
    .long 0x1BADB002            /* multiboot 1 magic */
    .long 0                     /* flags */
    .long -0x1BADB002           /* checksum */

    .code32
    .globl _start
_start:
    cli
    mov $stack_top, %esp
    call kick_main
1:  hlt
    jmp 1b

    .bss
    .align 16
    .space 16384
stack_top:

    .section .note.GNU-stack, "", @progbits  /* no executable stack */
