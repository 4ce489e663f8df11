# The devices of the kvmcost QEMU (configure --without-default-devices
# --with-devices-x86_64=nom-kvmcost): what nom, the Linux guest and the OSv guest use.
CONFIG_Q35=y
CONFIG_VIRTIO_PCI=y
CONFIG_VIRTIO_NET=y
CONFIG_VIRTIO_BLK=y
CONFIG_ISA_DEBUG=y
# The OSv guest's clock ("Neither paravirtual clock nor HPET" without it): its register reads
# are counted in the ledger as "hpet", never charged (patches/0004: kvm-clock's stand-in).
CONFIG_HPET=y
