#include "html_style.h"

namespace memledger::report {

// Colours by buffer category (--c-*), the verdict, the figures, the charts (plot, axes,
// buffers, labels, marker lines, peak), the tables.
std::string_view html_style() {
  return R"(
:root{--c-input:#4e79a7;--c-output:#59a14f;--c-activation:#f28e2b;--c-constant:#b07aa1;--c-workspace:#e15759;
--c-persistent:#76b7b2;--ink:#1f2328;--muted:#59636e;--line:#d1d9e0;--bg:#f6f8fa}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:var(--ink);background:var(--bg)}
main{max-width:1320px;margin:0 auto;padding:20px 24px 40px}
h1{font-size:22px;margin:0 0 4px}h1 .model{font-family:ui-monospace,"DejaVu Sans Mono",monospace;font-weight:600}
h2{font-size:17px;margin:0 0 6px}h3{font-size:15px;margin:14px 0 6px}
.sub{color:var(--muted);margin:0 0 12px}
section,.card{background:#fff;border:1px solid var(--line);border-radius:8px;padding:14px 16px;margin:14px 0}
.note{color:var(--muted);margin:2px 0 8px;font-size:13px}
.verdict{border-radius:8px;padding:10px 14px;margin:10px 0;font-size:15px}
.verdict.fits{background:#dafbe1;border:1px solid #4ac26b}.verdict.nofit{background:#ffebe9;border:1px solid #ff8182}
.verdict b{margin-right:6px}
.figures{display:grid;grid-template-columns:repeat(auto-fit,minmax(170px,1fr));gap:10px;margin:10px 0}
.figure{background:#fff;border:1px solid var(--line);border-radius:8px;padding:8px 12px}
.figure .label{color:var(--muted);font-size:12px;text-transform:uppercase;letter-spacing:.04em}
.figure .value{font-size:20px;font-weight:600;font-variant-numeric:tabular-nums}
.figure .note{margin:0;font-size:12px;overflow-wrap:anywhere}
.legend{display:flex;flex-wrap:wrap;gap:14px;font-size:13px;color:var(--muted);margin:4px 0 6px}
.legend span{display:inline-flex;align-items:center;gap:5px}
i.sw{display:inline-block;width:12px;height:12px;border-radius:2px;margin-right:5px;vertical-align:-1px}
i.sw.alias{background:repeating-linear-gradient(45deg,#59a14f 0 3px,#fff 3px 6px);border:1px dashed #333}
i.ln{display:inline-block;width:22px;border-top:2px dashed}
i.ln.capacity{border-color:#cf222e}i.ln.arena{border-color:#59636e;border-top-style:dotted}
.sw.cat-input,.bar.cat-input{background:var(--c-input)}.sw.cat-output,.bar.cat-output{background:var(--c-output)}
.sw.cat-activation,.bar.cat-activation{background:var(--c-activation)}
.sw.cat-constant,.bar.cat-constant{background:var(--c-constant)}
.sw.cat-workspace,.bar.cat-workspace{background:var(--c-workspace)}
.sw.cat-persistent,.bar.cat-persistent{background:var(--c-persistent)}
svg{display:block;width:100%;height:auto;font-family:inherit}
svg .cat-input{fill:var(--c-input)}svg .cat-output{fill:var(--c-output)}svg .cat-activation{fill:var(--c-activation)}
svg .cat-constant{fill:var(--c-constant)}svg .cat-workspace{fill:var(--c-workspace)}
svg .cat-persistent{fill:var(--c-persistent)}
.plot-bg{fill:#fbfcfd;stroke:var(--line)}
.grid{stroke:#e6eaef}.axis{stroke:#8c959f}
.tick{font-size:11px;fill:var(--muted)}.axis-title{font-size:12px;fill:var(--muted)}
.peak-band{fill:#fff6d1}.peak-band-label{font-size:11px;fill:#9a6700;font-weight:600}
.buf{stroke:#fff;stroke-width:.6}.buf:hover,.step:hover rect{stroke:#000;stroke-width:1.5}
.buf.alias{stroke:#24292f;stroke-dasharray:3 2;stroke-width:1}
.axis-break line{stroke:#8c959f;stroke-dasharray:1 3}.axis-break path{stroke:#57606a;stroke-width:1.5;fill:none}
.axis-break text{font-size:11px;fill:var(--muted)}
.buf-label{font-size:11px;fill:#1f2328;pointer-events:none}
.buf-label.alias{font-style:italic;paint-order:stroke;stroke:#fff;stroke-width:3px}
.arena-line line{stroke:#59636e;stroke-width:1.2;stroke-dasharray:2 3}.arena-line text{font-size:12px;fill:#59636e}
.arena-line text,.capacity-line text,.peak-label{paint-order:stroke;stroke:#fff;stroke-width:3px;stroke-linejoin:round}
.capacity-line line{stroke:#cf222e;stroke-width:1.6;stroke-dasharray:7 4}
.capacity-line text,.capacity-note{font-size:12px;fill:#cf222e;font-weight:600}
.peak-marker{fill:#1f2328}.peak-label{font-size:13px;font-weight:700;fill:#1f2328}
.step.peak rect{stroke:#1f2328;stroke-width:1}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{padding:4px 8px;border-bottom:1px solid #eaeef2;text-align:left;white-space:nowrap}
th{color:var(--muted);font-weight:600;border-bottom:1px solid var(--line)}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
td.name{font-family:ui-monospace,"DejaVu Sans Mono",monospace;font-size:12px;max-width:360px;overflow:hidden;text-overflow:ellipsis}
td.type{font-family:ui-monospace,"DejaVu Sans Mono",monospace;font-size:12px;color:var(--muted)}
tr.total td{font-weight:600;border-top:1px solid var(--line)}tr.rest td{color:var(--muted)}
.bar-col{width:28%}.bar{display:block;height:10px;border-radius:2px;min-width:1px}
table.compare{width:auto;min-width:560px}table.compare td:first-child{padding-right:32px}
.cols{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:14px}.cols>section{margin:0;min-width:0;overflow-x:auto}
@media (max-width:900px){.cols{grid-template-columns:1fr}}
details summary{cursor:pointer;font-weight:600}
.delta.down{color:#1a7f37}.delta.up{color:#cf222e}
footer{color:var(--muted);font-size:12px;margin-top:18px}
)";
}

}  // namespace memledger::report
