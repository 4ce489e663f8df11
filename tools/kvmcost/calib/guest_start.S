/* guest_start: the calibration mix (mix.c) as a multiboot (v1) guest: its line goes to COM1,
 * then isa-debug-exit (port 0xf4) ends QEMU with status 1. 32-bit protected mode, no paging,
 * as multiboot leaves it. */
    .text
    .align 4
    .long 0x1BADB002            /* multiboot 1 magic */
    .long 0                     /* flags */
    .long -0x1BADB002           /* checksum */

    .code32
    .globl _start, calib_put
_start:
    cli
    mov $stack_top, %esp
    call calib_main
    xor %eax, %eax
    outb %al, $0xf4             /* isa-debug-exit: QEMU exits (0 << 1) | 1 */
1:  hlt
    jmp 1b

calib_put:                      /* calib_put(s, n): each byte to COM1's data port */
    mov 4(%esp), %ecx
    mov 8(%esp), %edx
    push %esi
    mov %ecx, %esi
2:  test %edx, %edx
    jz 3f
    lodsb
    push %edx
    mov $0x3f8, %dx
    outb %al, %dx
    pop %edx
    dec %edx
    jmp 2b
3:  pop %esi
    ret

    .bss
    .align 16
    .space 16384
stack_top:

    .section .note.GNU-stack, "", @progbits  /* no executable stack */
