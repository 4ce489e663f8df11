/* kick_entry: multiboot (v1) entry of the kick guest (kick_guest.c): a stack, then C. */
#include "multiboot1.h"
    MULTIBOOT1_START
    mov $stack_top, %esp
    call kick_main
1:  hlt
    jmp 1b

    .bss
    .align 16
    .space 16384
stack_top:

    .section .note.GNU-stack, "", @progbits  /* no executable stack */
