#!/usr/bin/python3
"""The model sweep: every model of an exported corpus through memledger and onnxruntime.

For each model of DIR/manifest.json (its folded variant, <name>.onnx):

  inspect                      exit code 0
  plan --json                  nodes (steps), peak-live bytes, arena bytes, plan wall time
  run --input input=X.npy      output, wall time and peak RSS (/usr/bin/time -v)
  onnxruntime (run_model.mjs)  output, wall time and peak RSS, one thread, same input
  compare                      max|memledger − onnxruntime| ≤ 1e-3 · max|onnxruntime| (the
                               tolerance of tests/exec/ort_reference_test.cpp)
  run --arena                  exit code 0: every output bit-identical inside the planned arena

and writes one row per model, in one run so both tools are measured side by side, to
--json and (with --markdown FILE) between the sweep markers of FILE (docs/sweep.md).
A model that fails a step is a row with the step and the first line of the message.

  /usr/bin/python3 scripts/corpus/sweep.py --corpus /work/sweep --memledger build/memledger \\
      [--models a,b] [--json sweep.json [--merge]] [--markdown docs/sweep.md] [--no-arena]

A --models run with --markdown alone writes a table of those models only; with --json FILE
--merge the rows of FILE for the other models are kept, so the table stays whole.

Needs numpy (Debian's python3-numpy), node with tests/ort/node_modules (npm ci
--ignore-scripts in tests/ort) and GNU time (/usr/bin/time).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RTOL = 1e-3
BEGIN = "<!-- sweep:begin (scripts/corpus/sweep.py writes this table) -->"
END = "<!-- sweep:end -->"


def timed(cmd: list[str], timeout: float) -> tuple[int, float, int, str]:
    """Runs cmd under /usr/bin/time -v: (exit code, wall seconds, peak RSS bytes, output tail)."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
        started = time.monotonic()
        try:
            p = subprocess.run(["/usr/bin/time", "-v", "-o", tf.name] + cmd, capture_output=True, text=True,
                               timeout=timeout)
            code, out = p.returncode, (p.stdout + p.stderr)
        except subprocess.TimeoutExpired:
            return 124, time.monotonic() - started, 0, f"timed out after {timeout:.0f} s"
        wall = time.monotonic() - started
        text = Path(tf.name).read_text()
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
    return code, wall, int(m.group(1)) * 1024 if m else 0, out.strip()


def first_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    for line in lines:
        if "error" in line.lower() or "fail" in line.lower():
            return line.strip()[:300]
    return (lines[-1] if lines else "").strip()[:300]


def sweep_model(name: str, entry: dict, corpus: Path, memledger: str, work: Path, arena: bool,
                timeout: float) -> dict:
    import numpy as np

    model = corpus / f"{name}.onnx"
    x = corpus / entry["input"]["file"]
    row: dict = {"model": name, "ok": False}
    code, _, _, out = timed([memledger, "inspect", str(model)], timeout)
    if code != 0:
        return {**row, "failed": "inspect", "why": first_line(out)}
    plan_json = work / f"{name}.plan.json"
    code, wall, _, out = timed([memledger, "plan", str(model), "--brief", "--json", str(plan_json)], timeout)
    if code != 0:
        return {**row, "failed": "plan", "why": first_line(out)}
    report = json.loads(plan_json.read_text())
    row.update(nodes=len(report["timeline"]), peak_live=report["ledger"]["peak_live_bytes"],
               arena=report["plan"]["arena_bytes"], plan_s=wall)
    ours, theirs = work / f"{name}.memledger", work / f"{name}.ort"
    input_name = entry["input_name"]
    code, wall, rss, out = timed([memledger, "run", str(model), "--input", f"{input_name}={x}", "--output-dir",
                                  str(ours)], timeout)
    if code != 0:
        return {**row, "failed": "run", "why": first_line(out)}
    row.update(run_s=wall, run_rss=rss)
    code, wall, rss, out = timed(["node", str(ROOT / "tests/ort/run_model.mjs"), str(model), str(theirs),
                                  f"{input_name}={x}"], timeout)
    if code != 0:
        return {**row, "failed": "onnxruntime", "why": first_line(out)}
    row.update(ort_s=wall, ort_rss=rss)
    output = entry["output_name"]
    a = np.load(ours / f"{output}.npy").astype(np.float64)
    b = np.load(theirs / f"{output}.npy").astype(np.float64)
    if a.shape != b.shape:
        return {**row, "failed": "compare", "why": f"shape {a.shape} vs onnxruntime {b.shape}"}
    diff = float(np.max(np.abs(a - b))) if a.size else 0.0
    scale = float(np.max(np.abs(b))) if b.size else 0.0
    row.update(max_diff=diff, max_ort=scale)
    if not diff <= RTOL * scale:
        return {**row, "failed": "compare", "why": f"max|diff| {diff:.3g} > {RTOL} x max|ort| {scale:.3g}"}
    if arena:
        # The arena holds the weights too: models over run's default 2 GiB (regnet_y_128gf,
        # vit_h_14) get a limit of their arena and 1 GiB more.
        limit = max(2 << 30, row["arena"] + (1 << 30))
        code, _, _, out = timed([memledger, "run", str(model), "--input", f"{input_name}={x}", "--arena",
                                 "--max-memory", str(limit)], timeout)
        if code != 0:
            return {**row, "failed": "run --arena", "why": first_line(out)}
        row["arena_identical"] = True
    row["ok"] = True
    return row


def mib(b) -> str:
    return f"{b / 2**20:.1f}" if b else "–"


def markdown(rows: list[dict], when: str, arena: bool, manifest: dict) -> str:
    # The tool's own memory bound (issue 12): peak RSS of `run` ≤ weights + arena + 64 MiB.
    for r in rows:
        r.setdefault("weights", manifest["models"].get(r["model"], {}).get("parameter_bytes"))
    bounded = [r for r in rows if r.get("run_rss") and r.get("weights") and r.get("arena")]
    within = sum(r["run_rss"] <= r["weights"] + r["arena"] + 64 * 2**20 for r in bounded)
    # The planned arena holds the constants too (the default profile keeps them inside), so
    # weights + arena counts the weights twice; arena + 64 MiB counts them once.
    within_once = sum(r["run_rss"] <= r["arena"] + 64 * 2**20 for r in bounded)
    below = sum(r["run_rss"] < r["ort_rss"] for r in bounded if r.get("ort_rss"))
    lines = [
        f"Sweep run {when} by `scripts/corpus/sweep.py` (memledger and onnxruntime-node side by side, one "
        "thread each, same seeded input; wall time is the whole process: load, plan or session creation, run; "
        "peak RSS from `/usr/bin/time -v`). "
        f"{sum(r['ok'] for r in rows)} of {len(rows)} models pass every step"
        f"{' (run --arena bit-identical included)' if arena else ' (run --arena not run)'}. "
        f"Peak RSS of `memledger run` is within weights + arena + 64 MiB on {within} of {len(bounded)}, "
        f"within arena + 64 MiB (the arena holds the weights: counted once) on {within_once} of {len(bounded)}, "
        f"and below onnxruntime's on {below} of {len(bounded)}. Weights in files of 16 MiB and more are "
        "memory-mapped, and RSS counts the mapped pages a run touches.",
        "",
        "| model | nodes | weights MiB | peak-live MiB | arena MiB | plan s | max diff / max ort | memledger s | "
        "ort s | memledger RSS MiB | ort RSS MiB | result |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        rel = f"{r['max_diff'] / r['max_ort']:.1e}" if r.get("max_ort") else "–"
        result = "ok" if r["ok"] else f"**{r['failed']}**: {r['why'].replace('|', '/')}"
        lines.append(
            f"| {r['model']} | {r.get('nodes', '–')} | {mib(r.get('weights'))} | {mib(r.get('peak_live'))} | "
            f"{mib(r.get('arena'))} | {r['plan_s']:.2f} | {rel} | " if "plan_s" in r else
            f"| {r['model']} | – | {mib(r.get('weights'))} | – | – | – | – | ")
        if "plan_s" in r:
            lines[-1] += (f"{r['run_s']:.2f} | " if "run_s" in r else "– | ") + \
                         (f"{r['ort_s']:.2f} | " if "ort_s" in r else "– | ") + \
                         f"{mib(r.get('run_rss'))} | {mib(r.get('ort_rss'))} | {result} |"
        else:
            lines[-1] += f"– | – | – | – | {result} |"
    return "\n".join(lines) + "\n"


def write_markdown(path: Path, table: str) -> None:
    text = path.read_text()
    block = f"{BEGIN}\n{table}{END}"
    if BEGIN in text and END in text:
        text = text[:text.index(BEGIN)] + block + text[text.index(END) + len(END):]
    else:
        text = text.rstrip("\n") + "\n\n## Model sweep\n\n" + block + "\n"
    path.write_text(text)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--memledger", default=str(ROOT / "build/memledger"))
    parser.add_argument("--models", help="comma-separated subset (default: every model of the manifest)")
    parser.add_argument("--json", type=Path, help="write the rows here")
    parser.add_argument("--markdown", type=Path, help="replace the sweep table in this file")
    parser.add_argument("--no-arena", action="store_true", help="leave out run --arena")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per step (default 1800)")
    parser.add_argument("--from-json", type=Path, action="append", default=[],
                        help="write the table from the rows of earlier runs (repeatable) instead of running")
    parser.add_argument("--merge", action="store_true",
                        help="with --json: keep the file's rows of models this run leaves out, so a --models "
                             "run updates its rows of the whole table (and --markdown writes all of them)")
    args = parser.parse_args(argv)

    manifest = json.loads((args.corpus / "manifest.json").read_text())
    if args.from_json:
        rows = sorted((r for f in args.from_json for r in json.loads(f.read_text())), key=lambda r: r["model"])
        if args.markdown:
            write_markdown(args.markdown, markdown(rows, time.strftime("%Y-%m-%d"), not args.no_arena, manifest))
        return 0 if all(r["ok"] for r in rows) else 1
    names = [n.strip() for n in args.models.split(",")] if args.models else sorted(manifest["models"])
    missing = [n for n in names if n not in manifest["models"]]
    if missing:
        print(f"sweep: not in {args.corpus}/manifest.json: {', '.join(missing)}", file=sys.stderr)
        return 2
    if args.merge and not args.json:
        parser.error("--merge needs --json FILE (the rows to merge into)")
    earlier = json.loads(args.json.read_text()) if args.merge and args.json.exists() else []
    kept = [r for r in earlier if r["model"] not in names]
    rows = []

    def all_rows() -> list[dict]:
        # An earlier row of a model this run has not reached yet stays until it is replaced,
        # so a run stopped halfway loses nothing.
        done = {r["model"] for r in rows}
        pending = [r for r in earlier if r["model"] in names and r["model"] not in done]
        return sorted(kept + pending + rows, key=lambda r: r["model"])

    with tempfile.TemporaryDirectory(prefix="sweep.") as tmp:
        for i, name in enumerate(names, 1):
            work = Path(tmp) / name
            work.mkdir()
            row = sweep_model(name, manifest["models"][name], args.corpus, args.memledger, work, not args.no_arena,
                              args.timeout)
            rows.append(row)
            status = "ok" if row["ok"] else f"FAILED at {row['failed']}: {row['why']}"
            print(f"[{i}/{len(names)}] {name}: {status}", flush=True)
            if args.json:
                args.json.write_text(json.dumps(all_rows(), indent=1) + "\n")
    if args.markdown:
        write_markdown(args.markdown, markdown(all_rows(), time.strftime("%Y-%m-%d"), not args.no_arena, manifest))
    ok = sum(r["ok"] for r in rows)
    print(f"sweep: {ok} of {len(rows)} models pass" + (f" ({len(kept)} rows kept from {args.json})" if kept else ""))
    return 0 if ok == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
