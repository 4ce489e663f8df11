/* idle_b2b_guest: IDLE idle turns marked back to back, as libnom's idle loop marks them
 * (sched.c: a turn's end mark is followed at once by the next turn's begin mark, so that the
 * loop's own instructions between two turns are idle polling too). A begin mark, then per turn
 * nop, nop, a jump, nop, nop, dec, jz; the end mark, the next begin mark and the jump back;
 * the last turn's jz leaves for a last end mark. Every instruction from the first begin mark
 * to the last end mark is idle: 9 in the first turn, 10 in each later one (its begin mark and
 * the jump back come first), 10 * IDLE - 1 in IDLE spins. */
#define BEGIN_MARK .byte 0x0f, 0x1f, 0x84, 0x00, 'N', 'O', 'M', 'i'
#define END_MARK   .byte 0x0f, 0x1f, 0x84, 0x00, 'N', 'O', 'M', 'w'
#include "multiboot1.h"
    MULTIBOOT1_START
    mov $IDLE, %ecx
    BEGIN_MARK
1:  nop
    nop
    jmp 2f                      /* a turn spans blocks, as a real one does */
2:  nop
    nop
    dec %ecx
    jz 3f
    END_MARK
    BEGIN_MARK
    jmp 1b
3:  END_MARK
    xor %eax, %eax
    out %al, $0xf4              /* isa-debug-exit: QEMU exits with (0 << 1) | 1 */
4:  hlt
    jmp 4b

    .section .note.GNU-stack, "", @progbits  /* no executable stack */
