/* layout.h: the kernel's own virtual layout; shared by C and assembly. */
#ifndef NOM_LAYOUT_H
#define NOM_LAYOUT_H

#define KERNEL_VMA       0xFFFFFFFF80000000
/* All physical memory (and MMIO on demand) is mapped at DIRECT_MAP + physical address. */
#define DIRECT_MAP       0xFFFF800000000000
#define BOOT_STACK_SIZE  16384
#define KSTACK_SIZE      16384   /* per context */
#define MAX_CPUS         64

#endif
