"""Does our nhttpd, built for Linux (apps/nhttpd), serve the page from the Linux guest?"""
import os

import pytest

import linuxguest
import loadgen
import netlab
from linuxguest.build import NHTTPD_LINUX
from loadgen import apps
from nomvm import Nic

pytestmark = pytest.mark.boot


@pytest.mark.skipif(not os.path.isfile(NHTTPD_LINUX), reason="nhttpd-linux not built")
def test_nhttpd_serves_the_page_to_nomload(tmp_path):
    with netlab.NetLab() as lab:
        vm = linuxguest.make_vm("nhttpd", Nic(mac="52:54:00:12:34:56", backend="tap",
                                              tap=lab.tap), workdir=str(tmp_path))
        lab.start_vm(vm)
        try:
            linuxguest.wait_ready(vm, timeout=600)
            r = loadgen.nomload(lab, "http", lab.guest_ip, apps.HTTP_PORT, 1, 1,
                                str(tmp_path), extra=["--path", apps.INDEX_PATH])
            assert r["requests"] > 0 and r["errors"] == 0
        finally:
            vm.stop()


def test_nginx_and_nhttpd_cannot_share_port_80():
    with pytest.raises(ValueError):
        linuxguest.make_vm(["nginx", "nhttpd"], Nic(mac="52:54:00:12:34:56"))
