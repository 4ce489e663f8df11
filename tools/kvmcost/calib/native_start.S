/* native_start: the calibration mix (mix.c) as a 32-bit Linux program without libc: write(2)
 * and exit(2) through int 0x80 (i386 system call numbers 4 and 1). */
    .text
    .code32
    .globl _start, calib_put
_start:
    and $-16, %esp
    call calib_main
    mov $1, %eax                /* exit(0) */
    xor %ebx, %ebx
    int $0x80

calib_put:                      /* calib_put(s, n): write(1, s, n) */
    push %ebx
    mov $4, %eax
    mov $1, %ebx
    mov 8(%esp), %ecx
    mov 12(%esp), %edx
    int $0x80
    pop %ebx
    ret

    .section .note.GNU-stack, "", @progbits  /* no executable stack */
