#!/usr/bin/env python3
"""The banks benchmark table (issue 37, item 5 in part): each corpus model on each built-in
board with [[banks]], planned by `memledger plan --json` (int8 storage, as the boards' profiles
say). Per row: whether it fits, the bytes placed in each bank, the slow-memory traffic against
its lower bound, and whether one bank alone (the board's first, fastest bank for activations)
could hold the peak-live -- the single-bank planning of before.

  bench/plan/banks_table.py BUILD/memledger CORPUS_DIR [MODEL ...]
"""
import json
import os
import subprocess
import sys
import tempfile
import time

BOARDS = ["stm32h743", "stm32f746", "esp32s3", "rp2040", "nrf52840", "ethos-u55"]


def main():
    cli, corpus = sys.argv[1], sys.argv[2]
    models = sys.argv[3:] or ["mobilenet_v2", "resnet18", "squeezenet1_0", "shufflenet_v2_x1_0"]
    print("| model | board | fits | peak-live | bytes per bank (arena) | traffic / lower bound | one bank holds it | s |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for model in models:
            path = os.path.join(corpus, model + ".onnx")
            if not os.path.exists(path):
                continue
            for board in BOARDS:
                out = os.path.join(tmp, f"{model}.{board}.json")
                start = time.time()
                run = subprocess.run([cli, "plan", path, "--device", board, "--brief", "--time-budget", "1",
                                      "--json", out], capture_output=True, text=True)
                seconds = time.time() - start
                if run.returncode not in (0, 3):
                    print(f"| {model} | {board} | error {run.returncode} | {run.stderr.strip()[:80]} |||||")
                    continue
                report = json.load(open(out))
                banks = report["banks"]
                peak = report["ledger"]["peak_live_bytes"]
                per_bank = ", ".join(f"{b['name']} {b['arena_bytes']}" for b in banks["banks"] if b["buffer_count"])
                first = next(b for b in banks["banks"] if "activations" in b["holds"])
                ratio = banks["traffic_cost"] / banks["lower_bound_traffic_cost"] if banks["lower_bound_traffic_cost"] else 1
                print(f"| {model} | {board} | {'yes' if banks['fits'] else 'NO'} | {peak} | {per_bank} | "
                      f"{banks['traffic_cost']:.3g} / {banks['lower_bound_traffic_cost']:.3g} ({ratio:.3f}x) | "
                      f"{'yes' if peak <= first['capacity_bytes'] else 'no'} | {seconds:.1f} |")


if __name__ == "__main__":
    main()
