/* idle_guest: a multiboot (v1) guest with a known count of marked idle polling (insn_count.c's
 * idle marks, as libnom's idle loop emits them). IDLE turns of begin mark, 2 nops, a jump,
 * 2 nops, end mark (7 idle instructions, across two blocks that the loop's own instructions
 * share), then WORK turns with a begin mark and no end mark (turns that found work: none of
 * it idle), then it exits through QEMU's isa-debug-exit port 0xf4. The plugin must count
 * 7 * IDLE idle instructions in IDLE spins. */
#define BEGIN_MARK .byte 0x0f, 0x1f, 0x84, 0x00, 'N', 'O', 'M', 'i'
#define END_MARK   .byte 0x0f, 0x1f, 0x84, 0x00, 'N', 'O', 'M', 'w'
#include "multiboot1.h"
    MULTIBOOT1_START
    mov $IDLE, %ecx
1:  BEGIN_MARK
    nop
    nop
    jmp 2f                      /* the turn spans two blocks, as a real one spans many */
2:  nop
    nop
    END_MARK
    dec %ecx
    jnz 1b
    mov $WORK, %ecx
3:  BEGIN_MARK
    nop
    dec %ecx
    jnz 3b
    xor %eax, %eax
    out %al, $0xf4              /* isa-debug-exit: QEMU exits with (0 << 1) | 1 */
4:  hlt
    jmp 4b

    .section .note.GNU-stack, "", @progbits  /* no executable stack */
