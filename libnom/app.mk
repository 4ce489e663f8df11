# What every nom application Makefile includes to compile and link against libnom and newlib.
#
#   include $(TOP)/libnom/app.mk
#   prog.o: prog.c ; $(CC) $(NOM_CFLAGS) -c -o $@ $<
#   prog.elf: prog.o $(NOM_LINK_DEPS) ; $(CC) $(NOM_LDFLAGS) -o $@ prog.o $(NOM_LIBS)
#
# NOM_CFLAGS: freestanding-of-glibc C for ring 3: newlib's headers (-nostdinc), libnom's own POSIX
#   headers first (sockets, poll, pthread, ...; they shadow newlib's where newlib lacks things),
#   the kernel ABI headers, the host's Linux macros undefined (DESIGN.md, "Toolchain facts").
#   Ring-3 code may use SSE and the red zone. Add your own -O/-g/-W flags.
# NOM_LDFLAGS: static, non-PIE, linker/app.ld (applications start at 0x400000, abi.h), crt0.
# NOM_LIBS: libnom, newlib's libc and libm, libgcc, as one group (they call each other).
# NOM_LINK_DEPS: the files a link depends on (for make prerequisites).
# NOM_PROFILE_CGEN: `$(NOM_PROFILE_CGEN) profile.json out.c` turns an application's measured
#   profile into the C table nom_adapt_profile its controller reads (nom/adapt.h); a bad profile
#   stops the build with the reason. NOM_PROFILE_CGEN_DEPS: what that output depends on.
TOP   ?= $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/..)
BUILD ?= $(TOP)/build

NOM_NEWLIB_SYSROOT := $(BUILD)/libnom/newlib/install/x86_64-elf
NOM_GCC_INCLUDE    := $(shell gcc -print-file-name=include)
NOM_LIBGCC         := $(shell gcc -print-libgcc-file-name)

# NOM_LTO: link-time optimization, for the code of a request's path that lives in separate
#   units and libraries: libnom, lwIP, net/ and the virtio-net driver (their Makefiles) and the
#   applications' own code where they can (not NetPIPE's objcopy-renamed objects, not
#   memcached's configure-built tree). Their small calls across files and libraries (pbuf header
#   moves, the driver's deadline and commit calls, the socket layer's lwIP calls, libnom's
#   preemption and wake-up calls) are inlined at the link: about 500 instructions less per
#   NetPIPE message without libnom (issue 16, results/per-request-2026-12-01-lto).
#   NOM_LTO_LINK: the link flags that go with it; harmless in a link without IR objects.
NOM_LTO      := -flto
NOM_LTO_LINK := -flto=auto -O2 -g

NOM_CFLAGS := -std=gnu11 -nostdinc -fno-pie -fno-stack-protector \
              -fno-asynchronous-unwind-tables \
              -U__linux__ -Ulinux -U__gnu_linux__ -U__unix__ -U__unix -Uunix -D__nom__ \
              -D_READ_WRITE_RETURN_TYPE=_ssize_t -D__DYNAMIC_REENT__ \
              -isystem $(TOP)/libnom/include -isystem $(TOP)/kernel/include \
              -isystem $(NOM_NEWLIB_SYSROOT)/include -isystem $(NOM_GCC_INCLUDE)
NOM_LDFLAGS := -nostdlib -static -no-pie -Wl,--build-id=none -Wl,-z,noexecstack $(NOM_LTO_LINK) \
               -T $(TOP)/linker/app.ld $(BUILD)/libnom/crt0.o
# NOM_STRING_FUNCS: libnom's (src/) replace newlib's; undefined (-u) from the start, they are
#   taken from libnom.a even where only newlib's own code calls them. They are compiled without
#   LTO (libnom/Makefile): GCC emits calls to them during the link-time compilation.
NOM_STRING_FUNCS := memcpy memmove memchr memcmp strlen
# NOM_NEWLIB_HOOKS: what newlib's libc.a calls back into libnom for (`nm -u` of libc.a that
#   libnom.a defines). Named undefined (-u) from the start, the libnom objects that define them
#   are taken in the linker's first pass: a libc.a member that the link-time compilation pulls
#   in late (printf turned into puts, an abort) finds them there, where an IR object first
#   wanted that late could no longer be added ("undefined reference to `_exit'"). A newlib that
#   needs one more fails the same way, loudly: add it here. This is also what makes the link
#   take libnom's locks (newlib_locks.c) over libc.a's single-threaded defaults (misc/lock.o).
NOM_NEWLIB_HOOKS := _exit close environ execve fcntl fork fstat getentropy getpid gettimeofday \
                    isatty kill link lseek mkdir open raise read sbrk sigprocmask stat times \
                    unlink wait write __getreent __retarget_lock_acquire \
                    __retarget_lock_acquire_recursive __retarget_lock_close_recursive \
                    __retarget_lock_init_recursive __retarget_lock_release \
                    __retarget_lock_release_recursive __lock___arc4random_mutex \
                    __lock___at_quick_exit_mutex __lock___atexit_recursive_mutex \
                    __lock___env_recursive_mutex __lock___malloc_recursive_mutex \
                    __lock___sfp_recursive_mutex __lock___sinit_recursive_mutex __lock___tz_mutex
NOM_COMMA := ,
NOM_LIBS := $(addprefix -Wl$(NOM_COMMA)-u$(NOM_COMMA),$(NOM_STRING_FUNCS) $(NOM_NEWLIB_HOOKS)) \
            -Wl,--start-group $(BUILD)/libnom/libnom.a $(NOM_NEWLIB_SYSROOT)/lib/libc.a \
            $(NOM_NEWLIB_SYSROOT)/lib/libm.a $(NOM_LIBGCC) -Wl,--end-group
NOM_LINK_DEPS := $(TOP)/linker/app.ld $(BUILD)/libnom/crt0.o $(BUILD)/libnom/libnom.a \
                 $(TOP)/libnom/app.mk
NOM_PROFILE_CGEN := python3 $(TOP)/tools/profile/cgen.py
NOM_PROFILE_CGEN_DEPS := $(TOP)/tools/profile/cgen.py $(TOP)/tools/profile/profile_data.py
