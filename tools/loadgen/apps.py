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
# streaming ("many"). Each receiver serves one session, then the guest starts it again.
NETPIPE_PINGPONG_PORT = 5002
NETPIPE_STREAM_PORT = 5003
NETPIPE_PINGPONG_ARGS = ["-P", str(NETPIPE_PINGPONG_PORT), "-l", "1024", "-u", "1024", "-p", "0"]
NETPIPE_STREAM_BYTES = 32768
NETPIPE_STREAM_ARGS = ["-s", "-P", str(NETPIPE_STREAM_PORT), "-l", str(NETPIPE_STREAM_BYTES),
                       "-u", str(NETPIPE_STREAM_BYTES), "-p", "0"]
# NetPIPE's TRIALS: 3 in the makefile's `tcp` build (no -DFINAL), which is ours.
NETPIPE_TRIALS = 3
