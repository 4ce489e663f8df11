"""memcached on nom in a 64 MiB VM (issue 16: a VM started with -m 64 serves any one
application): it boots, answers a real client (pymemcache), and keeps answering when the client
stores more than the VM holds (memcached -m 64 in a 64 MiB VM: its cache limit is above the
memory the guest has, so the allocator, not the LRU, meets the limit first)."""
import pytest

pytestmark = pytest.mark.boot

SMALL_MB = 64
# memcached's cache limit in the 64 MiB VM. With the image's -m 64 the guest runs out first
# (60 MiB free at boot; the kernel maps the ELF's 26.1 MB bss at load, 16 MiB of it lwIP's
# ram_heap, 6 MiB PBUF_POOL, 2.2 MiB TCP PCBs): 160 sets of 512 KiB
# succeed, then a small set answers SERVER_ERROR out of memory (its slab class has no page
# and none can be had). Sized below what is left, the LRU evicts and every class keeps room.
CACHE_MB = 16


def test_serves_in_64_mib(boot_memcached, tmp_path):
    with boot_memcached(tmp_path, memory_mb=SMALL_MB) as server:
        c = server.client()
        value = bytes(range(256)) * 4
        assert c.set(b"m64:k", value, noreply=False)
        assert c.get(b"m64:k") == value
        assert "nom: app memcached started" in server.vm.log(), server.vm.tail()


def test_answers_after_storing_more_than_the_vm_holds(boot_memcached, tmp_path):
    with boot_memcached(tmp_path, extra=f"-m {CACHE_MB}", memory_mb=SMALL_MB) as server:
        c = server.client()
        big = b"v" * (512 * 1024)
        for i in range(160):  # 80 MiB of values: more than the guest's memory
            assert c.set(b"fill:%d" % i, big, noreply=False)
        assert c.set(b"after", b"still here", noreply=False)
        assert c.get(b"after") == b"still here"
        assert int(server.stats()["curr_items"]) >= 1
        assert "app memcached exited" not in server.vm.log(), server.vm.tail()
