"""nom under libvirt (issue 15): a domain's XML per image, the connection, `make libvirt-run`.

Named nomvirt, not libvirt: tools/ is on Python's path machine-wide (bootstrap's nom-tools.pth),
where a package called libvirt would shadow libvirt's own Python binding. It drives libvirt
through virsh, so it needs no binding itself.
"""
