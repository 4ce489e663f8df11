"""holds.py with the "many" load at another number of memcaslap connections (issue 5's class is
32): python3 conns.py N holds-args... (run from the repository's root)."""
import sys
import loadgen.phase
sys.path.insert(0, "tools/bench")
import holds
loadgen.phase.MANY_CONNS = int(sys.argv[1])
sys.exit(holds.main(sys.argv[2:]))
