/* multiboot1.h: the start every test guest here shares (assembler, through cpp): a multiboot
 * (v1) header asking nothing of the loader, at the start of .text (it must lie in the file's
 * first 8 KiB), then _start in 32-bit protected mode with interrupts off, as multiboot leaves
 * it. The guest's own code follows the macro. */
#define MULTIBOOT1_START                                                                      \
    .text;                                                                                    \
    .align 4;                                                                                 \
    .long 0x1BADB002;           /* multiboot 1 magic */                                       \
    .long 0;                    /* flags: nothing asked of the loader */                      \
    .long -0x1BADB002;          /* checksum */                                                \
    .code32;                                                                                  \
    .globl _start;                                                                            \
_start:                                                                                       \
    cli
