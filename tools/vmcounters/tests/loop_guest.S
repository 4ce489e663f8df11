/* loop_guest: a multiboot (v1) guest that executes a known number of instructions and exits.
 * It runs LOOPS iterations of a two-instruction loop (dec; jnz), then writes 0 to QEMU's
 * isa-debug-exit port 0xf4 (QEMU exits with status 1). Two builds with different LOOPS differ
 * by exactly 2 * (difference of LOOPS) executed instructions: the test checks the plugin by it.
 */
#include "multiboot1.h"
    MULTIBOOT1_START
    mov $LOOPS, %ecx
1:  dec %ecx
    jnz 1b
    xor %eax, %eax
    out %al, $0xf4              /* isa-debug-exit: QEMU exits with (0 << 1) | 1 */
2:  hlt
    jmp 2b

    .section .note.GNU-stack, "", @progbits  /* no executable stack */
