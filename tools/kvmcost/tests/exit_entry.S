/* exit_entry: interrupt entries of the exit guest (exit_guest.c). Its multiboot header and
 * _start are tools/vmcounters' kick_entry.S, assembled with kick_main renamed guest_main. */
    .text
    .code32
    .globl ipi_entry, timer_entry, unexpected_entry
ipi_entry:
    pushal
    cld
    call on_ipi
    popal
    iret

timer_entry:
    pushal
    cld
    call on_timer
    popal
    iret

unexpected_entry:               /* any other vector: the test fails with code 3 */
    push $3
    call guest_exit
1:  hlt
    jmp 1b

    .section .note.GNU-stack, "", @progbits  /* no executable stack */
