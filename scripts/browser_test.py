#!/usr/bin/python3
"""Renders memledger's HTML reports in headless Chromium and checks what a person sees.

For each case it writes the report and the JSON report of the same plan, renders the HTML
in Chromium (Debian's `chromium`), takes a screenshot and dumps the rendered DOM, then
checks real content against the JSON:
  * one `rect.buf` in the arena picture per buffer, with the same name, offset, size and
    steps as the JSON;
  * the peak label's bytes equal the JSON's peak-live, in its data and in its text;
  * in the browser's layout: every buffer rectangle has a size, the peak label lies inside
    its chart, the page has no horizontal scroll at 1400 px;
  * the screenshot shows the arena: pixels of the largest category's colour;
  * the file is self-contained (no src/href/@import, no url() but to its own #ids).

Cases: teaching (the expanded Mul + Add model), teaching-C (in place, an alias), compare
(the expanded model beside variant C), optimize (`optimize --html` on a small model with
BatchNormalization), resnet18 and banks (mobilenet_v2 planned across the ESP32-S3's banks: a
lane per bank) from the corpus; exit 77 = skipped when the corpus is missing, unless
MEMLEDGER_REQUIRE_CORPUS=1 makes that a failure.

  browser_test.py --memledger BUILD/memledger --out DIR --case teaching [--corpus DIR]

Screenshots: DIR/<case>.png (1400×1000, what a person sees first) and
DIR/<case>-full.png (the whole page). Standard library only.
"""

import argparse
import html.parser
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

SKIP = 77
CATEGORY_COLOURS = {  # the fills of html_report.cpp's stylesheet
    "input": (0x4E, 0x79, 0xA7),
    "output": (0x59, 0xA1, 0x4F),
    "activation": (0xF2, 0x8E, 0x2B),
    "constant": (0xB0, 0x7A, 0xA1),
    "workspace": (0xE1, 0x57, 0x59),
}

# Measures the rendered layout and leaves the result in the DOM for --dump-dom.
PROBE = """
<script>
(() => {
  const box = (e) => { const r = e.getBoundingClientRect(); return {x: r.x, y: r.y, w: r.width, h: r.height}; };
  const ownText = (e) => [...e.childNodes].filter((n) => n.nodeType === 3).map((n) => n.data).join('');
  const result = {innerWidth: window.innerWidth, scrollWidth: document.documentElement.scrollWidth,
                  scrollHeight: document.documentElement.scrollHeight, charts: {}};
  for (const svg of document.querySelectorAll('svg.arena')) {
    result.charts[svg.id] = {box: box(svg), rects: [...svg.querySelectorAll('rect.buf')].map((r) => box(r))};
  }
  for (const label of document.querySelectorAll('.peak-label')) {
    result.charts[label.id] = {text: ownText(label), bytes: label.dataset.bytes, box: box(label),
                               chart: box(label.ownerSVGElement)};
  }
  const pre = document.createElement('pre');
  pre.id = 'memledger-probe';
  pre.textContent = JSON.stringify(result);
  document.body.appendChild(pre);
})();
</script>
"""


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


def run(cmd, **kwargs):
    print("$ " + " ".join(cmd), flush=True)
    result = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        raise Failure(f"exit code {result.returncode} from {cmd[0]}\n{result.stdout}\n{result.stderr}")
    return result.stdout


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    raise Failure("no chromium found: install Debian's package (apt-get install -y chromium; "
                  "scripts/setup.sh lists it in the test group)")


def chromium(browser, url, *extra, timeout=120):
    with tempfile.TemporaryDirectory(prefix="memledger-chromium-") as profile:
        cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               "--hide-scrollbars", f"--user-data-dir={profile}", *extra, url]
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        if result.returncode != 0:
            raise Failure(f"chromium exited {result.returncode}\n{result.stderr[-3000:]}")
        return result.stdout


class ArenaRects(html.parser.HTMLParser):
    """The rect.buf elements of each svg.arena, and the #...peak-label elements."""

    def __init__(self):
        super().__init__()
        self.svg_stack = []
        self.rects = {}
        self.peak_labels = {}
        self.current_label = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        classes = (a.get("class") or "").split()
        if tag == "svg":
            self.svg_stack.append(a.get("id", "") if "arena" in classes else None)
        elif tag == "rect" and "buf" in classes and self.svg_stack and self.svg_stack[-1]:
            self.rects.setdefault(self.svg_stack[-1], []).append(a)
        elif tag == "text" and "peak-label" in classes:
            self.current_label = a.get("id", "")
            self.peak_labels[self.current_label] = {"attrs": a, "text": ""}
        elif tag == "title":
            self.current_label = None  # the tooltip is not the label's text

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag == "svg":
            self.svg_stack.pop()

    def handle_endtag(self, tag):
        if tag == "svg" and self.svg_stack:
            self.svg_stack.pop()
        if tag == "text":
            self.current_label = None

    def handle_data(self, data):
        if self.current_label is not None:
            self.peak_labels[self.current_label]["text"] += data


def png_pixels(path):
    """(width, height, rows of RGB tuples) of an 8-bit RGB or RGBA PNG."""
    with open(path, "rb") as f:
        data = f.read()
    check(data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG")
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            check(depth == 8 and colour in (2, 6), f"{path}: unexpected PNG format {depth}/{colour}")
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            up_left = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - up_left
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - up_left)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else up_left)) & 0xFF
        rows.append([tuple(line[x * channels:x * channels + 3]) for x in range(width)])
        previous = line
    return width, height, rows


def check_self_contained(text, name):
    lowered = text.lower().replace("url(#", "")  # references inside the page are fine
    for marker in (" src=", " href=", "url(", "@import", "<link", "<script"):
        check(marker not in lowered, f"{name}: the report must be self-contained but contains '{marker}'")


def check_rects(parser, probe, arena_id, buffers):
    """The rectangles of svg#arena_id against the JSON's buffers drawn there."""
    rects = parser.rects.get(arena_id, [])
    check(len(rects) == len(buffers),
          f"{arena_id}: {len(rects)} buffer rectangles rendered, the JSON has {len(buffers)} buffers")
    want = sorted((b["name"], b["category"], b["offset"], b["physical_bytes"], b["first_step"], b["last_step"])
                  for b in buffers)
    got = sorted((r["data-name"], r["data-category"], int(r["data-offset"]), int(r["data-physical"]),
                  int(r["data-first"]), int(r["data-last"])) for r in rects)
    check(want == got, f"{arena_id}: rectangles differ from the JSON's buffers: "
                       f"{[w for w in want if w not in got][:3]} vs {[g for g in got if g not in want][:3]}")
    sized = probe["charts"][arena_id]["rects"]
    check(all(r["w"] > 0 and r["h"] > 0 for r in sized), f"{arena_id}: a buffer rectangle renders with no size")
    return len(rects)


def check_report(browser, html_path, reports, out_dir, case):
    """reports: {svg id prefix ('' or 'before-'/'after-'): parsed JSON report}. A report of a
    plan across banks has one lane per bank that holds a buffer, svg#<prefix>arena-bank-<k>."""
    with open(html_path, encoding="utf-8") as f:
        page = f.read()
    check_self_contained(page, html_path)
    check(page.count("</body>") == 1, f"{html_path}: no single </body>")

    probe_path = os.path.join(out_dir, f"{case}.probe.html")
    with open(probe_path, "w", encoding="utf-8") as f:
        f.write(page.replace("</body>", PROBE + "</body>"))
    dom = chromium(browser, "file://" + os.path.abspath(probe_path), "--window-size=1400,1000", "--dump-dom")
    check("memledger-probe" in dom, "the probe did not run: Chromium rendered no DOM")

    parser = ArenaRects()
    parser.feed(dom)
    start = dom.index('id="memledger-probe">') + len('id="memledger-probe">')
    probe = json.loads(html.unescape(dom[start:dom.index("</pre>", start)]))

    for prefix, report in reports.items():
        label_id = prefix + "peak-label"
        if report.get("banks"):
            lanes = 0
            for k, bank in enumerate(report["banks"]["banks"]):
                mine = [b for b in report["buffers"] if b["bank"] == bank["name"]]
                if not mine:
                    check(f"{prefix}arena-bank-{k}" not in parser.rects, f"a lane for the empty bank {bank['name']}")
                    continue
                drawn = check_rects(parser, probe, f"{prefix}arena-bank-{k}", mine)
                print(f"  bank {bank['name']}: {drawn} rectangles = {len(mine)} buffers")
                lanes += 1
            check(lanes >= 2, f"{html_path}: {lanes} bank lanes; the case should spill to a second bank")
            rects = [b for b in report["buffers"] if b["bank"]]
            buffers = rects
            arena_id = prefix + "arena (banks)"
        else:
            arena_id, buffers = prefix + "arena", report["buffers"]
            rects = [None] * check_rects(parser, probe, arena_id, buffers)

        peak = report["ledger"]["peak_live_bytes"]
        label = parser.peak_labels.get(label_id)
        check(label is not None, f"no #{label_id} in the rendered page")
        check(int(label["attrs"]["data-bytes"]) == peak,
              f"#{label_id} data-bytes {label['attrs']['data-bytes']} != JSON peak-live {peak}")
        check(f"({peak} B)" in label["text"], f"#{label_id} text '{label['text']}' lacks the exact peak-live ({peak} B)")
        shown = probe["charts"][label_id]
        check(shown["text"] == label["text"], f"#{label_id}: rendered text '{shown['text']}' != '{label['text']}'")
        box, chart = shown["box"], shown["chart"]
        check(box["w"] > 0 and box["x"] >= chart["x"] - 0.5 and box["x"] + box["w"] <= chart["x"] + chart["w"] + 0.5
              and box["y"] >= chart["y"] - 0.5, f"#{label_id} is clipped: {box} outside its chart {chart}")
        print(f"  {prefix or ''}arena: {len(rects)} rectangles = {len(buffers)} buffers; "
              f"peak label '{label['text'].strip()}' = {peak} B")
    check(probe["scrollWidth"] <= probe["innerWidth"],
          f"the page scrolls sideways at {probe['innerWidth']} px (content {probe['scrollWidth']} px)")

    # What a person sees first, and the whole page.
    shot = os.path.join(out_dir, f"{case}.png")
    url = "file://" + os.path.abspath(html_path)
    chromium(browser, url, "--window-size=1400,1000", f"--screenshot={shot}")
    full_height = min(int(probe["scrollHeight"]) + 20, 8000)
    chromium(browser, url, f"--window-size=1400,{full_height}", f"--screenshot={os.path.join(out_dir, case)}-full.png")
    width, height, rows = png_pixels(shot)
    check((width, height) == (1400, 1000), f"{shot} is {width}×{height}, expected 1400×1000")
    report = next(iter(reports.values()))
    largest = max(report["ledger"]["by_category"].items(), key=lambda kv: kv[1]["physical_bytes"])[0]
    colour = CATEGORY_COLOURS[largest]
    pixels = sum(row.count(colour) for row in rows)
    check(pixels >= 400, f"{shot}: only {pixels} pixels of the {largest} colour {colour}: the arena is not visible")
    print(f"  screenshot {shot}: {pixels} pixels of {largest}")


def load_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def case_teaching(args, browser, variant):
    name = "teaching" if variant == "expanded" else f"teaching-{variant}"
    html_path, json_path = (os.path.join(args.out, f"{name}.{ext}") for ext in ("html", "json"))
    run([args.memledger, "demo", "--variant", variant, "--html", html_path, "--json", json_path])
    check_report(browser, html_path, {"": load_json(json_path)}, args.out, name)


def case_compare(args, browser):
    html_path = os.path.join(args.out, "compare.html")
    before, after = (os.path.join(args.out, f"compare-{v}.json") for v in ("before", "after"))
    run([args.memledger, "demo", "--compare-html", html_path, "--json", before])
    run([args.memledger, "demo", "--variant", "C", "--json", after])
    check_report(browser, html_path, {"before-": load_json(before), "after-": load_json(after)}, args.out, "compare")


def case_optimize(args, browser):
    """`optimize --html`: a real rewrite (BatchNormalization folded into the Conv) before and
    after, checked against the two plan reports in optimize's own --json."""
    here = os.path.dirname(os.path.abspath(__file__))
    model = os.path.normpath(os.path.join(here, "..", "tests", "data", "onnx", "conv_bn_relu.onnx"))
    out_model, json_path, html_path = (os.path.join(args.out, f"optimize.{ext}") for ext in ("onnx", "json", "html"))
    run([args.memledger, "optimize", model, "-o", out_model, "--json", json_path, "--html", html_path])
    report = load_json(json_path)
    check_report(browser, html_path, {"before-": report["before"], "after-": report["after"]}, args.out, "optimize")


def case_corpus(args, browser, model):
    corpus = args.corpus or ""
    path = os.path.join(corpus, f"{model}.onnx")
    if not os.path.isfile(path):
        message = (f"no {model}.onnx in the corpus folder '{corpus}': generate it first "
                   f"(cmake --build <build> --target corpus, see scripts/corpus/README.md)")
        if os.environ.get("MEMLEDGER_REQUIRE_CORPUS") == "1":
            raise Failure(message)
        print(f"SKIPPED: {message}")
        return SKIP
    help_text = subprocess.run([args.memledger, "plan", "--help"], capture_output=True, text=True).stdout
    check("--html" in help_text, "memledger plan has no --html option yet: wire plan_report_html "
                                 "(memledger/report/html_report.h) into tools/memledger/cmd_plan.cpp")
    html_path, json_path = (os.path.join(args.out, f"{model}.{ext}") for ext in ("html", "json"))
    run([args.memledger, "plan", path, "--brief", "--json", json_path, "--html", html_path])
    check_report(browser, html_path, {"": load_json(json_path)}, args.out, model)
    return 0


def case_banks(args, browser):
    """A plan across the ESP32-S3's banks (`plan --device esp32s3`): mobilenet_v2's
    activations in its SRAM and PSRAM, its weights in flash, a lane per bank."""
    corpus = args.corpus or ""
    path = os.path.join(corpus, "mobilenet_v2.onnx")
    if not os.path.isfile(path):
        message = f"no mobilenet_v2.onnx in the corpus folder '{corpus}'"
        if os.environ.get("MEMLEDGER_REQUIRE_CORPUS") == "1":
            raise Failure(message)
        print(f"SKIPPED: {message}")
        return SKIP
    html_path, json_path = (os.path.join(args.out, f"banks.{ext}") for ext in ("html", "json"))
    run([args.memledger, "plan", path, "--device", "esp32s3", "--brief", "--json", json_path, "--html", html_path])
    check_report(browser, html_path, {"": load_json(json_path)}, args.out, "banks")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memledger", required=True, help="the memledger program")
    parser.add_argument("--out", required=True, help="folder for reports, screenshots and DOM dumps")
    parser.add_argument("--case", required=True, choices=["teaching", "teaching-C", "compare", "optimize", "resnet18", "banks"])
    parser.add_argument("--corpus", help="folder of the ONNX corpus (resnet18.onnx)")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    try:
        browser = find_chromium()
        if args.case == "teaching":
            case_teaching(args, browser, "expanded")
        elif args.case == "teaching-C":
            case_teaching(args, browser, "C")
        elif args.case == "compare":
            case_compare(args, browser)
        elif args.case == "optimize":
            case_optimize(args, browser)
        elif args.case == "banks":
            if case_banks(args, browser) == SKIP:
                return SKIP
        else:
            if case_corpus(args, browser, args.case) == SKIP:
                return SKIP
    except (Failure, subprocess.TimeoutExpired) as e:
        print(f"FAILED ({args.case}): {e}", file=sys.stderr)
        return 1
    print(f"PASSED ({args.case})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
