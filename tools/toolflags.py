"""Flags that several host tools share, spelled one way everywhere: a list is one argument
with commas (`--w 0,10,20`), never several words, and W, the batching delay, is in µs."""
import argparse


def int_list(text):
    """argparse type: "0,10,20" -> [0, 10, 20]; "" -> [] (none); negative or non-integer
    items are a usage error (exit 2)."""
    try:
        values = [int(item) for item in text.split(",") if item.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected integers separated by commas, e.g. 0,10,20, not {text!r}") from None
    if any(v < 0 for v in values):
        raise argparse.ArgumentTypeError(f"negative value in {text!r}")
    return values


def add_w_list(parser, default, what="batching delays W"):
    """--w W[,W...]: the batching delays (µs) a tool runs, one after the other."""
    parser.add_argument("--w", type=int_list, default=list(default), metavar="W[,W...]",
                        help=f"{what}, µs, comma-separated (default {','.join(map(str, default))})")
