"""What every guest serves and how the load reaches it: ports, the web document, NPtcp options.

One definition for the Linux guest (tools/linuxguest), OSv and the load wrappers, so that the
guests serve the same thing on the same ports and NPtcp's receiver in a guest runs exactly the
options its transmitter uses (NetPIPE requires identical options on both sides, issue 5).
nom's own NPtcp (apps/netpipe) must be started with the same receiver options.
"""
MEMCACHED_PORT = 11211
HTTP_PORT = 80
INDEX_PATH = "/index.html"  # the 175-byte document (paper section 6)
INDEX_BYTES = 175

# NPtcp's default port serves ping-pong of 1024-byte messages ("single"); a second port serves
# NetPIPE's both-ways mode ("many"): -2, each side sends a 32 KiB message and receives the
# other's, round after round. The paper's "many" NetPIPE is "bi-directional streaming"; NetPIPE
# 3.7.2 refuses -s (one-way streaming) with -2, and a one-way stream into the guest leaves it
# nothing to send but ACKs, so its bill and its latency would not be the service's.
# Each receiver serves one session, then the guest starts it again.
NETPIPE_PINGPONG_PORT = 5002
NETPIPE_BIDIR_PORT = 5003
NETPIPE_PINGPONG_ARGS = ["-P", str(NETPIPE_PINGPONG_PORT), "-l", "1024", "-u", "1024", "-p", "0"]
NETPIPE_BIDIR_BYTES = 32768
NETPIPE_BIDIR_ARGS = ["-2", "-P", str(NETPIPE_BIDIR_PORT), "-l", str(NETPIPE_BIDIR_BYTES),
                      "-u", str(NETPIPE_BIDIR_BYTES), "-p", "0"]
# NetPIPE's TRIALS: 3 in the makefile's `tcp` build (no -DFINAL), which is ours.
NETPIPE_TRIALS = 3
