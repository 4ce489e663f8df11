"""tools/profile: the offline throughput/latency/jitter profile of a nom application per load
class and batching delay W (paper 6.1: "generated offline"), and its C table (cgen)."""
