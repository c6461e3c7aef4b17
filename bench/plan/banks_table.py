#!/usr/bin/env python3
"""The banks benchmark table (issue 37, item 5 in part): each corpus model on each built-in
board with [[banks]], planned by `memledger plan --json` (int8 storage, as the boards' profiles
say). Per row: whether it fits, the bytes placed in each bank, the slow-memory traffic against
its lower bound, and whether one bank alone (the board's first, fastest bank for activations)
could hold the peak-live -- the single-bank planning of before.

  bench/plan/banks_table.py BUILD/memledger CORPUS_DIR [MODEL ...]

With --fit (issue 37, item 5): `memledger fit` on each model and board instead, three ways --
the default (extra MACs and slow-bank traffic weighed in the board's cycles), --prefer spill and
--prefer patches (fit with patches only, as far as patches reach) -- and per row the step kept,
the bytes per bank, the slow-bank traffic and the cycles it costs (a patches row with no slow
traffic is the one-arena fit of before, into the fastest bank alone). Models are CORPUS_DIR/<name>.onnx or, for the
int8 corpus, <name>.int8.onnx.

  bench/plan/banks_table.py --fit BUILD/memledger INT8_CORPUS_DIR [MODEL ...]
"""
import json
import os
import subprocess
import sys
import tempfile
import time

BOARDS = ["stm32h743", "stm32f746", "esp32s3", "rp2040", "nrf52840", "ethos-u55"]


def model_path(corpus, model):
    for name in (model + ".int8.onnx", model + ".onnx"):
        if os.path.exists(os.path.join(corpus, name)):
            return os.path.join(corpus, name)
    return None


def fit_row(cli, path, board, prefer, tmp):
    out = os.path.join(tmp, "fit.json")
    args = [cli, "fit", path, "--device", board, "--time-budget", "1", "--json", out]
    if prefer:
        args += ["--prefer", prefer]
    start = time.time()
    run = subprocess.run(args, capture_output=True, text=True)
    seconds = time.time() - start
    if run.returncode not in (0, 3):
        return None, run.stderr.strip()[:80], seconds
    return json.load(open(out)), "", seconds


def fit_table(cli, corpus, models):
    models = models or ["mobilenet_v2", "mnasnet1_0", "resnet18", "efficientnet_b0"]
    print("| model | board | fit | fits | kept | peak-live | bytes per bank (writable) | slow traffic | extra MACs "
          "| cycles | s |")
    print("|---|---|---|---|---|---:|---|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for model in models:
            path = model_path(corpus, model)
            if not path:
                continue
            for board in BOARDS:
                for prefer in ("", "spill", "patches"):
                    report, error, seconds = fit_row(cli, path, board, prefer, tmp)
                    label = prefer or "cheapest"
                    if report is None:
                        print(f"| {model} | {board} | {label} | error | {error} |||||||")
                        continue
                    fit = report["fit"]
                    kept = [s for s in fit["steps"] if s["kept"]][-1]
                    banks = report["banks"]["banks"]
                    per_bank = ", ".join(f"{b['name']} {b['arena_bytes']}" for b in banks
                                         if b["buffer_count"] and not b["read_only"])
                    macs = 100.0 * kept["extra_macs"] / fit["model_macs"] if fit["model_macs"] else 0
                    print(f"| {model} | {board} | {label} | {'yes' if fit['fits'] else 'NO'} | {kept['step']} | "
                          f"{kept['peak_live_bytes']} | {per_bank} | {kept['slow_traffic_bytes']} | {macs:+.1f} % | "
                          f"{kept['cost_cycles'] / 1e6:.1f} M | {seconds:.1f} |")
                    if prefer == "" and not fit["fits"]:
                        break  # the preferences cannot fit what the cheapest search cannot


def main():
    if sys.argv[1] == "--fit":
        fit_table(sys.argv[2], sys.argv[3], sys.argv[4:])
        return
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
