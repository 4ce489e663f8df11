"""The -smp value nomvm gives QEMU: under TCG a one-vCPU guest must still be translated with
CF_PARALLEL, or TCG drops its memory barriers and virtio's event-index handshake loses
notifications (tools/nomvm/vm.py, smp_option). The guest still sees one CPU: the kernel's
boot test `test_every_cpu_comes_online_and_the_board_agrees[1]` checks that under this option."""
import pytest

from nomvm import VM
from nomvm.vm import smp_option

pytestmark = pytest.mark.unit


def test_one_vcpu_under_tcg_allows_an_absent_second():
    assert smp_option(1, "tcg") == "1,maxcpus=2"


def test_several_vcpus_and_kvm_are_left_alone():
    assert smp_option(2, "tcg") == "2"
    assert smp_option(1, "kvm") == "1"


def test_the_vm_command_line_carries_it(tmp_path):
    vm = VM(kernel="/nonexistent", smp=1, accel="tcg", workdir=str(tmp_path))
    assert vm.args[vm.args.index("-smp") + 1] == "1,maxcpus=2"
