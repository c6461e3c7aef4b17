#!/usr/bin/env python3
"""Import time of two memledger builds side by side: CPU seconds (user + sys) of
`memledger inspect MODEL`, which is import plus a linear walk, for each model, alternating
the builds run by run so both see the same machine load; medians of --runs.

    bench/onnx/import_time.py --before OLD/memledger --after build/memledger \\
        /work/sweep/vit_b_16.onnx /work/sweep/swin_t.onnx ...

Prints one Markdown row per model: before, after, after ÷ before. Used for the table in
docs/benchmarks.md ("Shapes from the op table").
"""
import argparse
import os
import statistics
import subprocess
import sys


def cpu_seconds(program, model):
    child = subprocess.Popen([program, "inspect", model], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{program} inspect {model} failed: {child.stderr.read().decode()[:300]}")
    return usage.ru_utime + usage.ru_stime


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True)
    parser.add_argument("--after", required=True)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("models", nargs="+")
    args = parser.parse_args()
    print("| model | before (s CPU) | after (s CPU) | after ÷ before |")
    print("|---|---:|---:|---:|")
    for model in args.models:
        before, after = [], []
        for _ in range(args.runs):
            before.append(cpu_seconds(args.before, model))
            after.append(cpu_seconds(args.after, model))
        b, a = statistics.median(before), statistics.median(after)
        print(f"| {os.path.basename(model)} | {b:.2f} | {a:.2f} | {a / b:.2f} |", flush=True)


if __name__ == "__main__":
    main()
