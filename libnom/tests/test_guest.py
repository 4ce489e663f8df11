"""libnom in a booted nom (issue 3, Tests): the conformance application (tests/guest/conform.c)
runs its table of named tests in one boot, epoll's (tests/guest/epoll.c) in another (not beside
it: conform's timed cases would share the core); each pytest case here asks whether one of
them said "ok". The log is kept in the failure message."""
import os
import re
import subprocess

import pytest

from nomvm import TOP, boot_apps

pytestmark = pytest.mark.boot

GUEST = os.path.join(TOP, "build", "libnom", "tests")
CONFORMANCE = ["stdio_floats", "malloc_million", "threads_pingpong_200", "mutex_contended",
               "copies", "strings", "cond_timedwait", "timed_waits_share_a_timer",
               "nanosleep", "monotonic_threads", "preemption", "stack_growth", "bad_pointer",
               "stack_overflow",
               "pipe_poll", "blocking_read_waits_without_polling",
               "blocking_read_sees_readiness_signalled_during_it", "thread_locals",
               "bulletin_board", "mmap_reserve",
               "idle_hooks_and_notify", "yield_polls_idle_hooks",
               "mutex_release_polls_past_soft_deadline", "timer_runs_during_a_computation",
               "fpu_preempted", "callbacks_may_malloc",
               "sleepers_500", "signal_dispositions", "getrusage", "realtime_clock"]
EPOLL = ["epoll_level_triggered", "epoll_edge_and_one_shot", "epoll_wake_timeout_close",
         "epoll_socketpair_writable", "epoll_fd_in_poll", "epoll_errors"]


@pytest.fixture(scope="module")
def conformance():
    return boot_apps([(os.path.join(GUEST, "conform.elf"), "conform")], timeout=600)


@pytest.fixture(scope="module")
def epoll_app():
    return boot_apps([(os.path.join(GUEST, "epoll.elf"), "epoll")], timeout=300)


@pytest.mark.parametrize("name", CONFORMANCE)
def test_conformance_case(conformance, name):
    assert re.search(rf"^ok {name} ", conformance.log, re.M), conformance.log


@pytest.mark.parametrize("name", EPOLL)
def test_epoll_case(epoll_app, name):
    assert re.search(rf"^ok {name}$", epoll_app.log, re.M), epoll_app.log


def test_epoll_summary_and_exit_status(epoll_app):
    n = len(EPOLL)
    assert f"libnom epoll: {n}/{n} passed" in epoll_app.log, epoll_app.log
    assert re.search(r"^nom: app epoll exited 0\b", epoll_app.log, re.M), epoll_app.log


def test_conformance_summary_and_exit_status(conformance):
    n = len(CONFORMANCE)
    assert f"libnom conformance: {n}/{n} passed" in conformance.log, conformance.log
    assert re.search(r"^nom: app conform exited 0\b", conformance.log, re.M), conformance.log
    assert conformance.all_apps_ok


def test_bad_pointer_report_names_address_thread_and_cause(conformance):
    m = re.search(r"^nom: fault: read at 0x0000000000000010 rip 0x[0-9a-f]{16} "
                  r"thread \d+ \(faulter\): null or low pointer", conformance.log, re.M)
    assert m, conformance.log


def test_stack_overflow_report_names_the_guard_page(conformance):
    m = re.search(r"^nom: fault: write at 0x[0-9a-f]{16} rip 0x[0-9a-f]{16} thread (\d+) "
                  r"\(overflower\): stack overflow into the guard page of thread (\d+)$",
                  conformance.log, re.M)
    assert m and m.group(1) == m.group(2), conformance.log


def test_exit_status_argv_environment_and_float_printf():
    r = boot_apps([(os.path.join(GUEST, "hello.elf"), "GREETING=hi hello a b")])
    assert "hello from libnom: argc=3 argv[0]=hello pi=3.14159 GREETING=hi" in r.log, r.log
    assert re.search(r"^nom: app hello exited 7\b", r.log, re.M), r.log


def test_console_lines_stay_whole_between_applications():
    """Two applications write 20 lines each, every line in five write()s 2 ms apart: each line
    reaches the console whole (console.c buffers up to the newline), and a last line without
    a newline still shows when the application exits."""
    r = boot_apps([(os.path.join(GUEST, "lines.elf"), "lines a 20"),
                   (os.path.join(GUEST, "lines.elf"), "lines b 20")], timeout=300)
    for name in "ab":
        whole = re.findall(rf"lines {name} (\d+) whole$", r.log, re.M)
        assert whole == [str(i) for i in range(20)], r.log
        assert f"lines {name} done" in r.log, r.log
    # Every "lines " (but the kernel's "app lines ...") starts a whole line or the last one
    # ("done", which other output may follow).
    torn = [r.log[m.start():m.start() + 40] for m in re.finditer("(?<!app )lines ", r.log)
            if not re.match(r"lines [ab] (\d+ whole$|done)", r.log[m.start():], re.M)]
    assert torn == [], r.log


def test_unhandled_fault_in_main_ends_the_application_with_139():
    r = boot_apps([(os.path.join(GUEST, "conform.elf"), "conform crash_main")])
    assert re.search(r"^nom: fault: write at 0x0000000000000008 .* thread 1 \(main\): ",
                     r.log, re.M), r.log
    assert re.search(r"^nom: app conform exited 139\b", r.log, re.M), r.log


BENCHMARKS = ["clock_gettime", "syscall_virt_to_phys", "mem_map_unmap_4_pages",
              "mutex_lock_unlock", "malloc_free_64", "thread_switch_yield", "condvar_round_trip",
              "pipe_round_trip", "pipe_round_trip_16_idle_pollers", "thread_create_join",
              "usleep_100us"]


def test_benchmark_runs_every_measurement():
    """The figures are reported, not judged (under TCG they measure the emulator too)."""
    r = boot_apps([(os.path.join(GUEST, "bench.elf"), "bench")], timeout=600)
    for name in BENCHMARKS:
        assert re.search(rf"^bench {name} \d+\.\d ns/op$", r.log, re.M), r.log
    assert r.all_apps_ok, r.log


def test_an_idle_application_blocks_its_core():
    """idle.c waits a second in four ways (sleep, timed condition wait, poll timeout, join);
    the kernel's CPU-time account at exit shows whether libnom blocked the core or spun."""
    r = boot_apps([(os.path.join(GUEST, "idle.elf"), "idle")])
    m = re.search(r"^nom: app idle exited 0 \(cpu time (\d+) ms\)", r.log, re.M)
    assert m and "idle: waited" in r.log, r.log
    assert int(m.group(1)) < 500, r.log


def test_thread_local_variables_are_per_thread():
    r = boot_apps([(os.path.join(GUEST, "tls.elf"), "tls")])
    assert "tls: ok" in r.log and r.all_apps_ok, r.log


def test_two_applications_with_threads_share_one_vcpu():
    """The kernel time-slices the applications; each schedules its own threads and blocks its
    context when idle, so both pass unchanged."""
    r = boot_apps([(os.path.join(GUEST, "conform.elf"), "conform"),
                   (os.path.join(GUEST, "bench.elf"), "bench")], smp=1, timeout=600)
    n = len(CONFORMANCE)
    assert f"libnom conformance: {n}/{n} passed" in r.log and "bench done" in r.log, r.log
    assert r.all_apps_ok, r.log


def test_application_elf_is_static_at_0x400000_without_glibc():
    """app.mk's link: no interpreter, no dynamic section, entry in the image at 0x400000,
    nothing from the host's C library (DESIGN.md, Toolchain facts)."""
    elf = os.path.join(GUEST, "conform.elf")
    headers = subprocess.run(["readelf", "-lhW", elf], capture_output=True, text=True,
                             check=True).stdout
    assert "INTERP" not in headers and "DYNAMIC" not in headers
    assert re.search(r"Entry point address:\s+0x4000[0-9a-f]{2}$", headers, re.M), headers
    loads = re.findall(r"^\s+LOAD\s+0x[0-9a-f]+ (0x[0-9a-f]+)", headers, re.M)
    assert loads and min(int(a, 16) for a in loads) == 0x400000, headers
    with open(elf, "rb") as f:
        assert b"GLIBC_" not in f.read()


@pytest.mark.parametrize("app", ["hello", "conform"])
def test_newlib_locks_are_libnoms_not_newlibs_empty_defaults(app):
    """newlib's libc.a has do-nothing lock functions (misc/lock.o); a program must link
    libnom's, or malloc and stdio run unlocked between user threads."""
    size = _symbol_size(os.path.join(GUEST, f"{app}.elf"), "__retarget_lock_acquire_recursive")
    assert size and size > 1, "newlib's empty lock functions were linked"


def _symbol_size(path, name):
    """The size nm -S gives the global function name in the ELF or archive at path, or None."""
    syms = subprocess.run(["nm", "-S", path], capture_output=True, text=True, check=True).stdout
    m = re.search(rf"^[0-9a-f]+ ([0-9a-f]+) T {name}$", syms, re.M)
    return m and int(m.group(1), 16)


@pytest.mark.parametrize("elf", ["libnom/tests/hello.elf", "libnom/tests/conform.elf",
                                 "apps/memcached/memcached.elf", "apps/nhttpd/nhttpd.elf",
                                 "apps/netpipe/NPtcp.elf"])
@pytest.mark.parametrize("function", ["memcpy", "memmove"])
def test_copies_are_libnoms_not_newlibs(elf, function):
    """newlib's memmove copies a byte at a time unless both ends are aligned alike, its memcpy
    bypasses the cache from 256 bytes on (src/memmove.c, src/memcpy.c): the ones linked must
    be libnom's."""
    ours = _symbol_size(os.path.join(TOP, "build", "libnom", "libnom.a"), function)
    assert ours, f"libnom.a has no {function}"
    assert _symbol_size(os.path.join(TOP, "build", elf), function) == ours, \
        f"the application linked newlib's {function}"
