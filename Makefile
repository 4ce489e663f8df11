# nom: the two commands a user needs are `make run` and `make test` (README.md).
# Every part builds into build/<part>/ with its own Makefile; this file orders them.
TOP   := $(abspath .)
BUILD := $(TOP)/build
export TOP BUILD
# This checkout's host tools come first for everything make runs, whatever bootstrap's
# site-packages .pth picks for a script run by hand (tools/nom_tools_site.py).
export PYTHONPATH := $(TOP)/tools$(if $(PYTHONPATH),:$(PYTHONPATH))

PARTS := kernel libnom drivers net apps
STAMP := $(BUILD)/.bootstrap-stamp
BOOTSTRAP_INPUTS := tools/bootstrap.sh tools/deps/debian-packages.txt \
                    tools/deps/debian-sources.txt tools/requirements.txt tools/nom_tools_site.py

.PHONY: all bootstrap run test experiment host-tools clean $(PARTS)

all: $(BUILD)/nom.iso listen-backlog

# Installs Debian packages, fetches pinned source packages, installs Python requirements.
$(STAMP): $(BOOTSTRAP_INPUTS)
	tools/bootstrap.sh
	@mkdir -p $(BUILD) && touch $@
bootstrap: $(STAMP)

kernel: $(STAMP)
	$(MAKE) -C kernel
libnom: $(STAMP)
	$(MAKE) -C libnom
drivers: libnom
	$(MAKE) -C drivers
net: libnom drivers
	$(MAKE) -C net
apps: kernel libnom drivers net
	$(MAKE) -C apps

# GRUB's BIOS platform, Debian's grub2 source with tools/grub/patches (tools/grub/README.md),
# into build/grub/i386-pc; a few minutes once per machine, then copied from /var/cache/nom-grub.
.PHONY: grub
grub: $(STAMP)
	tools/grub/build.sh

# The default image: the kernel plus the applications listed in apps/default-image.txt.
$(BUILD)/nom.iso: $(PARTS) grub apps/default-image.txt tools/mkiso.py
	python3 tools/mkiso.py --kernel $(BUILD)/kernel/nom.elf \
	    --modules apps/default-image.txt --output $@

# The library QEMU gets preloaded when it forwards host ports (tools/nomvm/listen_backlog).
.PHONY: listen-backlog
listen-backlog: $(STAMP)
	$(MAKE) -C tools/nomvm/listen_backlog

# Boots the default image with its applications reachable on 127.0.0.1 (DESIGN.md, ports).
run: all
	python3 tools/nomrun.py --iso $(BUILD)/nom.iso --kernel $(BUILD)/kernel/nom.elf \
	    --modules apps/default-image.txt $(RUN_FLAGS)

# A live page of the applications (tools/dashboard/README.md) on http://127.0.0.1:8090/, beside
# `make run`; DASHBOARD_FLAGS="--boot" boots nom itself, --port-shift=N follows make run's.
.PHONY: dashboard libvirt-run
dashboard: all
	python3 -m dashboard $(DASHBOARD_FLAGS)

# The default image as a libvirt domain with make run's ports (tools/nomvirt/README.md);
# LIBVIRT_FLAGS=--port-shift=N moves them. Ctrl-C destroys and undefines the domain.
libvirt-run: all
	python3 tools/nomvirt/run.py --iso $(BUILD)/nom.iso --kernel $(BUILD)/kernel/nom.elf \
	    --modules apps/default-image.txt $(LIBVIRT_FLAGS)

# pytest, then its closing line "N passed, N failed" (tools/test_summary.py); $(1): pytest's
# selection, $(2): the JUnit XML it writes.
run_tests = @mkdir -p $(BUILD); python3 -m pytest -q -p no:cacheprovider --junitxml=$(2) $(1); \
	    status=$$?; python3 tools/test_summary.py $(2); exit $$status

# Builds everything and runs every test; the last line reads "N passed, N failed".
# qemu-kvmcost: 2-3 min once per machine (2 cores), then copied from /var/cache/nom-kvmcost.
test: all host-tools qemu-kvmcost
	$(call run_tests,,$(BUILD)/test-results.xml)

# The quick subset: the tests marked unit (no QEMU boots; pytest.ini's markers), same closing
# line. They build on what `make test` builds, less the exit-cost QEMU: several read its
# outputs (GRUB's modules, the kernel's and applications' ELF files, nhttpd-linux, the
# instruction-count plugin, NetPIPE's patched source), so a fresh clone builds those first.
.PHONY: test-fast
test-fast: all host-tools
	$(call run_tests,-m unit,$(BUILD)/test-fast-results.xml)

# The host-side measuring tools (load client, instruction-count plugin, Linux guest).
HOST_TOOLS := tools/loadgen tools/vmcounters tools/linuxguest
host-tools: $(STAMP)
	for d in $(HOST_TOOLS); do $(MAKE) -C $$d || exit 1; done

# The exit-cost QEMU: Debian's qemu source plus tools/kvmcost/patches, x86_64 only, into
# build/kvmcost/ (tools/kvmcost/README.md); skipped when built or cached. `make run` keeps the
# stock qemu.
.PHONY: qemu-kvmcost
qemu-kvmcost: $(STAMP)
	tools/kvmcost/build.sh

# The paper's section-6 experiment, nom against Linux and OSv (tools/experiment/README.md).
# EXPERIMENT_ARGS=--quick runs the short version (under 20 min); --plan lists the runs. The
# main pass runs on the exit-cost QEMU (qemu-kvmcost).
experiment: all host-tools qemu-kvmcost
	python3 tools/experiment/run.py $(EXPERIMENT_ARGS)

# The OSv comparison images into build/osv/, where the experiment finds them (tools/osvguest/
# README.md): OSV_SRC=PATH names an OSv tree with its submodules; without it, build.py clones
# OSv at its pinned commit into build/osv-src. Installs OSv's Debian build packages itself.
.PHONY: osv
osv: $(STAMP)
	python3 tools/osvguest/build.py $(if $(OSV_SRC),--osv-src $(OSV_SRC),--clone $(BUILD)/osv-src)

# Issue 4's data-path benchmark: nhttpd on nom per batching delay and on Linux, and rawecho's
# round trip (tools/bench/README.md). BENCH_ARGS=--quick runs the one-minute check. Then issue
# 16's instructions per request, work and idle polling apart (PER_REQUEST_ARGS, e.g. --runs 1),
# and QEMU's start to the first answer, nom beside Linux (BOOT_TIME_ARGS, e.g. --boots 3).
.PHONY: bench
bench: all host-tools
	python3 tools/bench/run.py $(BENCH_ARGS)
	python3 tools/bench/per_request.py $(PER_REQUEST_ARGS)
	python3 tools/bench/boot_time.py $(BOOT_TIME_ARGS)

# Coverage-guided fuzzing of the parsers that take bytes from outside (tools/fuzz/README.md):
# builds each libFuzzer harness and runs it FUZZ_SECONDS s (default 60), then prints each one's
# executions, coverage and crashes. `make test` runs a short deterministic pass of the same.
.PHONY: fuzz
fuzz: $(STAMP)
	python3 tools/fuzz/run.py --seconds $(or $(FUZZ_SECONDS),60)

clean:
	rm -rf $(BUILD)/kernel $(BUILD)/libnom $(BUILD)/drivers $(BUILD)/net $(BUILD)/apps $(BUILD)/*.iso
