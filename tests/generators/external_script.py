"""A stand-in for a generator in another environment, run by ``--generator external`` in tests.

It resamples every column of ``--train`` on its own (an independent bootstrap seeded by
``--seed``) and writes ``--rows`` rows to ``--output``, keeping every value's text as it was read.
It uses the standard library only, so that the many runs of an audit start fast. Its other flags
make it misbehave.
"""

from __future__ import annotations

import argparse
import csv
import os
import random
import subprocess
import sys
import time
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--train", required=True)
    parser.add_argument("--output", required=True)
    parser.add_argument("--rows", type=int, required=True)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--schema")
    parser.add_argument("--sleep", type=float, default=0.0, help="sleep this long first")
    parser.add_argument("--fail", action="store_true", help="exit 3 after a few lines on stderr")
    parser.add_argument("--fail-if-exists", metavar="PATH", help="--fail once PATH exists")
    parser.add_argument("--hang", action="store_true", help="sleep for ten minutes")
    parser.add_argument("--bad-columns", action="store_true", help="drop two columns, add one")
    parser.add_argument("--bad-value", metavar="COLUMN", help="write a value no category has")
    parser.add_argument(
        "--spawn-child-and-hang",
        metavar="PIDFILE",
        help="start a sleeping child, write its pid and this one's to PIDFILE, then hang",
    )
    args = parser.parse_args()
    print("external-script: this goes to stdout")
    print("external-script: this goes to stderr", file=sys.stderr)
    if args.fail or (args.fail_if_exists and Path(args.fail_if_exists).exists()):
        print("loading the model...", file=sys.stderr)
        print("ModelError: the generator broke on purpose", file=sys.stderr)
        return 3
    if args.spawn_child_and_hang:
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        Path(args.spawn_child_and_hang).write_text(f"{os.getpid()} {child.pid}\n")
        args.hang = True
    if args.hang:
        time.sleep(600)
    time.sleep(args.sleep)
    if args.schema is not None:
        Path(args.schema).read_text(encoding="utf-8")  # it is there to read
    with open(args.train, newline="", encoding="utf-8") as file:
        reader = csv.reader(file)
        header = next(reader)
        rows = list(reader)
    rng = random.Random(args.seed)
    columns = [[rng.choice(rows)[j] for _ in range(args.rows)] for j in range(len(header))]
    if args.bad_value:
        columns[header.index(args.bad_value)][0] = "no such category"
    if args.bad_columns:
        header = [*header[2:], "invented"]
        columns = [*columns[2:], ["1"] * args.rows]
    with open(args.output, "w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(header)
        writer.writerows(zip(*columns, strict=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
