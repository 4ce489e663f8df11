# tools/fuzz/fuzz.mk: what every libFuzzer harness's Makefile (a fuzz/ folder beside the code it
# fuzzes) includes. Harnesses are built on the host with Debian's clang (libFuzzer comes with
# libclang-rt-NN-dev) under ASan and UBSan, every UBSan report fatal, so a finding is a crash
# with a reproducer. tools/fuzz/run.py builds and runs them (`make fuzz`, tools/fuzz/README.md).
TOP   ?= $(abspath ../../..)
BUILD ?= $(TOP)/build
FUZZ_OUT := $(BUILD)/fuzz

FUZZ_CC     ?= clang
FUZZ_SAN    := -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
FUZZ_CFLAGS := -std=c11 -D_DEFAULT_SOURCE -O1 -g -fno-omit-frame-pointer -Wall -Wextra -Werror \
               $(FUZZ_SAN)
