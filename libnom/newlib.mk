# newlib 3.3.0 for nom's ring-3 x86-64 userspace, built with the host gcc (DESIGN.md,
# "Toolchain facts"). Included by libnom/Makefile. Cached: rebuilt only if its stamp is missing.
#
# Choices baked into the build, which every application must share (libnom/app.mk repeats them):
#  - --target=x86_64-elf: no libgloss, no crt0; libnom supplies _start and the system calls.
#    newlib's reentrant stubs (_write_r ...) call _write, _sbrk, ... which libnom defines.
#  - -D__DYNAMIC_REENT__: every _REENT is __getreent(), which libnom answers with the running
#    user thread's own struct _reent (per-thread errno, stdio buffers, strtok state).
#  - --enable-newlib-retargetable-locking: stdio, malloc, atexit and env locks are libnom's
#    (__retarget_lock_* in libnom/src/newlib_locks.c), so they block the user thread, not the core.
#  - --enable-newlib-global-stdio-streams: one stdin/stdout/stderr shared by all threads (not
#    one buffered stdout per struct _reent).
#  - -D_READ_WRITE_RETURN_TYPE=_ssize_t: read/write return ssize_t as POSIX says.
NEWLIB_TARBALL := /usr/src/newlib/newlib-3.3.0.tar.xz
NEWLIB_DIR     := $(BUILD)/libnom/newlib
NEWLIB_PREFIX  := $(NEWLIB_DIR)/install
NEWLIB_SYSROOT := $(NEWLIB_PREFIX)/x86_64-elf
NEWLIB_STAMP   := $(NEWLIB_DIR)/.built
NEWLIB_CFLAGS  := -O2 -g -fno-pie -fno-stack-protector -fno-builtin-malloc \
                  -U__linux__ -Ulinux -U__gnu_linux__ -U__unix__ -U__unix -Uunix \
                  -D_READ_WRITE_RETURN_TYPE=_ssize_t -D__DYNAMIC_REENT__
NEWLIB_TOOLS   := CC_FOR_TARGET=gcc AR_FOR_TARGET=ar AS_FOR_TARGET=as LD_FOR_TARGET=ld \
                  NM_FOR_TARGET=nm RANLIB_FOR_TARGET=ranlib OBJDUMP_FOR_TARGET=objdump \
                  READELF_FOR_TARGET=readelf STRIP_FOR_TARGET=strip

$(NEWLIB_STAMP): $(NEWLIB_TARBALL) $(TOP)/libnom/newlib.mk
	rm -rf $(NEWLIB_DIR) && mkdir -p $(NEWLIB_DIR)/obj
	tar -C $(NEWLIB_DIR) -xf $(NEWLIB_TARBALL)
	cd $(NEWLIB_DIR)/obj && $(NEWLIB_TOOLS) CFLAGS_FOR_TARGET="$(NEWLIB_CFLAGS)" \
	    ../newlib-salsa/configure --target=x86_64-elf --prefix=$(NEWLIB_PREFIX) \
	    --disable-multilib --disable-libgloss --disable-newlib-supplied-syscalls \
	    --enable-newlib-retargetable-locking --enable-newlib-global-stdio-streams \
	    --enable-newlib-io-c99-formats \
	    --enable-newlib-io-long-long --disable-nls > configure.log 2>&1
	$(MAKE) -C $(NEWLIB_DIR)/obj all-target-newlib > $(NEWLIB_DIR)/obj/make.log 2>&1 \
	    || (tail -40 $(NEWLIB_DIR)/obj/make.log; exit 1)
	$(MAKE) -C $(NEWLIB_DIR)/obj install-target-newlib > $(NEWLIB_DIR)/obj/install.log 2>&1 \
	    || (tail -40 $(NEWLIB_DIR)/obj/install.log; exit 1)
	rm -rf $(NEWLIB_DIR)/newlib-salsa
	touch $@
