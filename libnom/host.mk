# libnom/host.mk: what a host build (unit tests, fuzz harnesses) includes to compile libnom's
# pure code with the host's gcc or clang and glibc. Only libnom's nom/ headers are put on the
# path (through a directory holding a link to them): libnom/include's POSIX headers are the
# guest's and would shadow glibc's.
#
#   include $(TOP)/libnom/host.mk
#   prog: prog.c $(NOM_PRICE_TEXT_SRC) | $(NOM_HOST_INCLUDE) ; $(CC) $(NOM_HOST_CFLAGS) ...
TOP   ?= $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/..)
BUILD ?= $(TOP)/build

NOM_HOST_INCLUDE := $(BUILD)/libnom/host-include/nom
NOM_HOST_CFLAGS  := -I$(dir $(NOM_HOST_INCLUDE)) -I$(TOP)/kernel/include
NOM_PROFIT       := $(TOP)/libnom/src/profit
NOM_PRICE_TEXT_SRC := $(NOM_PROFIT)/price_text.c
NOM_PRICE_SLOTS_SRC := $(NOM_PROFIT)/price_slots.c

$(NOM_HOST_INCLUDE):
	@mkdir -p $(@D)
	ln -sfn $(TOP)/libnom/include/nom $@
