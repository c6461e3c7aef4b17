#include "memledger/report/html_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string_view>
#include <vector>

#include "html_style.h"
#include "memledger/report/units.h"
#include "memledger/version.h"
#include "names.h"
#include "plan_charts.h"
#include "svg_plot.h"

namespace memledger {
namespace {

using report::arena_split;
using report::arena_svg;
using report::axis_max;
using report::escape;
using report::exact_bytes;
using report::kCategories;
using report::live_split;
using report::live_svg;

// A human figure whose exact value shows on hover.
std::string bytes_cell(int64_t bytes) {
  return fmt::format(R"(<td class="num" data-bytes="{}" title="{}">{}</td>)", bytes, exact_bytes(bytes),
                     human_bytes(bytes));
}

std::string percent(int64_t part, int64_t whole) {
  return whole > 0 ? fmt::format("{:.1f}%", 100.0 * static_cast<double>(part) / static_cast<double>(whole)) : "–";
}

std::string legend(const MemoryPlan& plan) {
  std::string out = "<div class=\"legend\">";
  for (BufferCategory c : kCategories)
    if (plan.ledger.by_category.contains(c))
      out += fmt::format(R"(<span><i class="sw cat-{}"></i>{}</span>)", to_string(c), to_string(c));
  bool aliases = false;
  for (const auto& b : plan.liveness.buffers) aliases = aliases || b.alias_of.has_value();
  if (aliases) out += R"(<span><i class="sw alias"></i>written in place over another buffer</span>)";
  if (plan.capacity_bytes > 0) out += R"(<span><i class="ln capacity"></i>capacity</span>)";
  out += R"(<span><i class="ln arena"></i>arena</span>)";
  return out + "</div>\n";
}

struct Verdict {
  bool fits = true;
  std::string headline, detail;
};

// Across banks: each bank's arena against its capacity, or what overflows where.
Verdict banked_verdict(const ReportSubject& s) {
  const BankedPlacement& banked = *s.plan.banked;
  if (!s.plan.fits) {
    std::string detail;
    for (const std::string& overflow : banked.solution.overflows) detail += (detail.empty() ? "" : "; ") + overflow;
    return {false, "Does not fit", detail};
  }
  std::string detail = fmt::format("across the {} banks of '{}':", banked.banks.size(), s.profile.name);
  for (size_t k = 0; k < banked.banks.size(); ++k) {
    const int64_t used = banked.solution.banks.at(k).solution.arena_bytes;
    if (used > 0)
      detail += fmt::format(" {} {} of {};", banked.banks[k].name, human_bytes(used),
                            human_bytes(banked.banks[k].capacity_bytes));
  }
  detail.pop_back();
  return {true, "Fits", detail};
}

Verdict verdict(const ReportSubject& s) {
  const MemoryPlan& plan = s.plan;
  if (plan.banked) return banked_verdict(s);
  if (plan.capacity_bytes <= 0)
    return {true, "Fits",
            fmt::format("'{}' sets no capacity; the arena needs {}", s.profile.name, human_bytes(plan.arena_bytes))};
  if (plan.fits)
    return {
        true, "Fits",
        fmt::format("arena {} of the {} capacity of '{}' ({}), {} to spare", human_bytes(plan.arena_bytes),
                    human_bytes(plan.capacity_bytes), s.profile.name, percent(plan.arena_bytes, plan.capacity_bytes),
                    human_bytes(plan.capacity_bytes - plan.arena_bytes))};
  std::string detail = fmt::format("arena {} exceeds the {} capacity of '{}' by {}", human_bytes(plan.arena_bytes),
                                   human_bytes(plan.capacity_bytes), s.profile.name,
                                   human_bytes(plan.arena_bytes - plan.capacity_bytes));
  if (plan.ledger.peak_live_bytes > plan.capacity_bytes)
    detail += fmt::format("; peak-live alone is {} over, so no placement can fit: what is live at once must shrink",
                          human_bytes(plan.ledger.peak_live_bytes - plan.capacity_bytes));
  else
    detail += "; peak-live is within capacity, so a better placement could fit";
  return {false, "Does not fit", detail};
}

std::string verdict_html(const ReportSubject& s, const std::string& id) {
  const Verdict v = verdict(s);
  return fmt::format(R"(<div id="{}" class="verdict {}" data-fits="{}"><b>{} {}</b> <span>{}</span></div>)"
                     "\n",
                     id, v.fits ? "fits" : "nofit", v.fits ? "true" : "false", v.fits ? "✔" : "✘", v.headline,
                     escape(v.detail));
}

std::string figure(const std::string& label, int64_t bytes, const std::string& note) {
  return fmt::format(
      R"(<div class="figure"><div class="label">{}</div><div class="value" data-bytes="{}" title="{}">{}</div>)"
      R"(<div class="note">{}</div></div>)",
      label, bytes, exact_bytes(bytes), human_bytes(bytes), escape(note));
}

std::string figures_html(const ReportSubject& s) {
  const MemoryPlan& plan = s.plan;
  const Ledger& l = plan.ledger;
  const std::string peak_node = l.timeline.empty() ? "" : l.timeline[static_cast<size_t>(l.peak_step)].node_name;
  std::string out = "<div class=\"figures\">";
  out += figure("peak-live", l.peak_live_bytes,
                fmt::format("at step {} ({}); {} the graph inputs", l.peak_step, peak_node,
                            l.inputs_in_arena ? "counts" : "leaves out"));
  out += figure(l.inputs_in_arena ? "peak-live without inputs" : "peak-live with inputs",
                l.inputs_in_arena ? l.peak_live_without_inputs_bytes : l.peak_live_with_inputs_bytes,
                l.inputs_in_arena ? "the graph inputs left out" : "the graph inputs (outside the arena) counted");
  out += figure("arena", plan.arena_bytes,
                fmt::format("{}, {}{}", plan.algorithm, plan.optimal ? "optimal" : "not proven optimal",
                            plan.arena_bytes > l.peak_live_bytes
                                ? ", " + human_bytes(plan.arena_bytes - l.peak_live_bytes) + " fragmentation"
                                : ""));
  if (plan.capacity_bytes > 0)
    out += figure("capacity", plan.capacity_bytes, "device '" + s.profile.name + "'");
  else
    out += fmt::format(R"(<div class="figure"><div class="label">capacity</div><div class="value">unlimited</div>)"
                       R"(<div class="note">device '{}'</div></div>)",
                       escape(s.profile.name));
  const ScheduleResult* schedule = s.schedule;
  if (schedule && schedule->peak_live_bytes < schedule->model_order_peak_bytes)
    out += figure("model order peak-live", schedule->model_order_peak_bytes,
                  fmt::format("this plan uses a memory-aware order ({}{}), {:.2f}x lower", schedule->method,
                              schedule->optimal ? ", optimal" : "",
                              static_cast<double>(schedule->model_order_peak_bytes) /
                                  static_cast<double>(std::max<int64_t>(schedule->peak_live_bytes, 1))));
  else
    out += fmt::format(R"(<div class="figure"><div class="label">order</div><div class="value">model's</div>)"
                       R"(<div class="note">{}</div></div>)",
                       escape(schedule ? (schedule->optimal ? "memory-aware search: no lower peak exists"
                                                            : "memory-aware search found no lower peak")
                                       : "memory-aware order not searched"));
  out += figure("logical", l.logical_bytes, "all values, no padding");
  out += figure("physical", l.physical_bytes, "all buffers under the layout rules");
  out += fmt::format(R"(<div class="figure"><div class="label">buffers · steps</div><div class="value">{} · {}</div>)"
                     R"(<div class="note">{} written in place</div></div>)",
                     plan.liveness.buffers.size(), plan.liveness.steps(),
                     std::count_if(plan.liveness.buffers.begin(), plan.liveness.buffers.end(),
                                   [](const LiveBuffer& b) { return b.alias_of.has_value(); }));
  return out + "</div>\n";
}

std::string category_table(const MemoryPlan& plan) {
  const Ledger& ledger = plan.ledger;
  const std::map<BufferCategory, int64_t> no_step;
  const auto& at_peak =
      ledger.timeline.empty() ? no_step : ledger.timeline[static_cast<size_t>(ledger.peak_step)].live_by_category;
  // The "outside the arena" column only where some buffer is (external constants, inputs).
  const bool external = plan.ledger.external_bytes > 0;
  const auto external_cell = [&](int64_t bytes) { return external ? bytes_cell(bytes) : std::string(); };
  std::string out = fmt::format(
      "<table class=\"ledger\"><thead><tr><th>category</th><th class=\"num\">buffers</th><th class=\"num\">logical"
      "</th><th class=\"num\">physical</th>{}<th class=\"num\">live at the peak</th></tr></thead><tbody>\n",
      external ? "<th class=\"num\">outside the arena</th>" : "");
  for (size_t c = 0; c < kCategories.size(); ++c) {
    const auto it = plan.ledger.by_category.find(kCategories[c]);
    if (it == plan.ledger.by_category.end()) continue;
    const auto peak_it = at_peak.find(kCategories[c]);
    const int64_t peak = peak_it == at_peak.end() ? 0 : peak_it->second;
    out +=
        fmt::format(R"(<tr data-category="{}"><td><i class="sw cat-{}"></i>{}</td><td class="num">{}</td>{}{}{}{}</tr>)"
                    "\n",
                    to_string(kCategories[c]), to_string(kCategories[c]), to_string(kCategories[c]), it->second.count,
                    bytes_cell(it->second.logical_bytes), bytes_cell(it->second.physical_bytes),
                    external_cell(it->second.external_bytes), bytes_cell(peak));
  }
  out += fmt::format(R"(<tr class="total"><td>total</td><td class="num">{}</td>{}{}{}{}</tr>)"
                     "\n",
                     plan.liveness.buffers.size(), bytes_cell(plan.ledger.logical_bytes),
                     bytes_cell(plan.ledger.physical_bytes), external_cell(plan.ledger.external_bytes),
                     bytes_cell(plan.ledger.peak_live_bytes));
  return out + "</tbody></table>\n";
}

std::string contributors_table(const MemoryPlan& plan, int count) {
  if (plan.ledger.timeline.empty()) return "";
  const TimelineStep& step = plan.ledger.timeline[static_cast<size_t>(plan.ledger.peak_step)];
  std::string out = fmt::format(
      "<p class=\"note\">At step {} (<code>{}</code>), {} is live in {} buffers; the largest:</p>\n"
      "<table class=\"contributors\"><thead><tr><th>buffer</th><th>category</th><th class=\"num\">physical</th>"
      "<th class=\"num\">share</th><th class=\"bar-col\"></th><th class=\"num\">steps</th></tr></thead><tbody>\n",
      step.step, escape(step.node_name), human_bytes(step.live_bytes), step.live_count);
  int shown = 0;
  int64_t rest = 0;
  int rest_count = 0;
  for (int index : live_buffers_at(plan.liveness, step.step)) {
    const LiveBuffer& b = plan.liveness.buffers[static_cast<size_t>(index)];
    if (b.alias_of) continue;
    if (shown == count) {
      rest += b.physical_bytes;
      ++rest_count;
      continue;
    }
    ++shown;
    const double share =
        step.live_bytes > 0 ? static_cast<double>(b.physical_bytes) / static_cast<double>(step.live_bytes) : 0.0;
    out += fmt::format(
        R"(<tr><td class="name" title="{}">{}</td><td><i class="sw cat-{}"></i>{}</td>{}<td class="num">{:.1f}%</td>)"
        R"(<td class="bar-col"><span class="bar cat-{}" style="width:{:.1f}%"></span></td><td class="num">{}–{}</td></tr>)"
        "\n",
        escape(b.name), escape(b.name), to_string(b.category), to_string(b.category), bytes_cell(b.physical_bytes),
        100 * share, to_string(b.category), 100 * share, b.first_step, b.last_step);
  }
  if (rest_count > 0)
    out +=
        fmt::format(R"(<tr class="rest"><td colspan="2">{} more</td>{}<td class="num">{}</td><td></td><td></td></tr>)"
                    "\n",
                    rest_count, bytes_cell(rest), percent(rest, step.live_bytes));
  return out + "</tbody></table>\n";
}

std::string buffers_table(const ReportSubject& s) {
  const MemoryPlan& plan = s.plan;
  const size_t n = plan.liveness.buffers.size();
  std::string out = fmt::format(
      "<details{}><summary>All {} buffers</summary>\n<table class=\"buffers\"><thead><tr><th>buffer</th>"
      "<th>category</th><th>type</th><th class=\"num\">logical</th><th class=\"num\">physical</th>"
      "<th class=\"num\">steps</th><th class=\"num\">offset</th><th>in place of</th></tr></thead><tbody>\n",
      n <= 24 ? " open" : "", n);
  for (size_t i = 0; i < n; ++i) {
    const LiveBuffer& b = plan.liveness.buffers[i];
    std::string type;
    if (b.value.valid()) {
      const Value& v = s.graph.value(b.value);
      type = fmt::format("{} {}", dtype_name(v.dtype), shape_to_string(v.shape));
    }
    out += fmt::format(
        R"(<tr><td class="name" title="{}">{}</td><td><i class="sw cat-{}"></i>{}</td><td class="type">{}</td>{}{})"
        R"(<td class="num">{}–{}</td><td class="num">{}</td><td class="name">{}</td></tr>)"
        "\n",
        escape(b.name), escape(b.name), to_string(b.category), to_string(b.category), escape(type),
        bytes_cell(b.logical_bytes), bytes_cell(b.physical_bytes), b.first_step, b.last_step,
        b.external ? std::string("external") : std::to_string(plan.offsets[i]),
        b.alias_of ? escape(plan.liveness.buffers[static_cast<size_t>(*b.alias_of)].name) : "");
  }
  return out + "</tbody></table>\n</details>\n";
}

std::string device_line(const DeviceProfile& p) {
  return fmt::format(
      "device <b>{}</b> · capacity {} · alignment {} B · {} activations · storage {} · constants {} · inputs {}",
      escape(p.name), p.capacity_bytes > 0 ? human_bytes(p.capacity_bytes) : "unlimited", p.alignment_bytes,
      to_string(p.layout), p.storage ? dtype_name(*p.storage) : "as in the model", to_string(p.constants),
      to_string(p.inputs));
}

std::string page_open(const std::string& title) {
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<meta name=\"generator\" content=\"memledger "
      "{}\">\n<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n<main>\n",
      kVersion, escape(title), report::html_style());
}

std::string page_close() {
  return fmt::format(
      "<footer>Written by memledger {}. Sizes in KiB/MiB (1024-based); hover any rectangle, bar or figure for exact "
      "bytes. Self-contained: no network, no scripts.</footer>\n</main>\n</body>\n</html>\n",
      kVersion);
}

constexpr std::string_view kArenaNote =
    "Each rectangle is one buffer: it spans the steps during which it is live and the addresses it occupies. "
    "Hatched rectangles with a dashed edge are outputs written in place over another buffer's memory.";
constexpr std::string_view kLiveNote =
    "Bytes live at each step, stacked by category (in-place outputs counted once). The tallest bar is peak-live, "
    "the least memory any placement needs.";

// Says what the break on a chart's byte axis means.
std::string split_note(int64_t split, std::string_view below, std::string_view what) {
  if (split <= 0) return "";
  return fmt::format(
      "<p class=\"note split-note\" data-bytes=\"{}\">The {} below {} (under the zigzag on the axis) hold {}, such "
      "as resident weights; that part is drawn compressed so what changes from step to step stays readable.</p>\n",
      split, below, human_bytes(split), what);
}

std::string delta_cell(int64_t before, int64_t after) {
  const int64_t d = after - before;
  if (d == 0) return R"(<td class="num delta">–</td>)";
  return fmt::format(R"(<td class="num delta {}" data-bytes="{}" title="{} B">{}{} ({}{})</td>)", d < 0 ? "down" : "up",
                     d, d, d < 0 ? "−" : "+", human_bytes(std::llabs(d)), d < 0 ? "−" : "+",
                     before > 0 ? percent(std::llabs(d), before) : "new");
}

// One bank's buffers as a plan of their own (offsets from the bank's base, its capacity and
// arena), which the arena picture draws as that bank's lane: every other buffer is left out
// as if outside the arena, a constant read in place from a flash bank drawn in that bank's.
MemoryPlan bank_view(const MemoryPlan& plan, int bank) {
  const BankedPlacement& banked = *plan.banked;
  const allocate::BankUse& use = banked.solution.banks.at(static_cast<size_t>(bank));
  MemoryPlan view = plan;
  view.banked.reset();
  for (size_t i = 0; i < view.liveness.buffers.size(); ++i) {
    LiveBuffer& b = view.liveness.buffers[i];
    const bool here = banked.bank_of[i] == bank;
    b.external = !here;
    if (!here) b.alias_of.reset();
  }
  view.arena_bytes = use.solution.arena_bytes;
  view.head_bytes = use.solution.arena_bytes;
  view.persistent_bytes = 0;
  view.lower_bound_bytes = use.lower_bound_bytes;
  view.capacity_bytes = banked.banks.at(static_cast<size_t>(bank)).capacity_bytes;
  view.fits = use.fits;
  view.optimal = use.solution.optimal;
  view.algorithm = use.solution.algorithm;
  return view;
}

// Each bank: what it may hold, its cost, capacity, arena and the bytes accessed there.
std::string banks_table(const MemoryPlan& plan) {
  const BankedPlacement& banked = *plan.banked;
  std::string out =
      "<table class=\"ledger banks\"><thead><tr><th>bank</th><th>holds</th><th class=\"num\">access cost</th>"
      "<th class=\"num\">capacity</th><th class=\"num\">arena</th><th class=\"num\">lower bound</th>"
      "<th class=\"num\">buffers</th><th class=\"num\">accessed</th><th class=\"num\">traffic cost</th>"
      "</tr></thead><tbody>\n";
  for (size_t k = 0; k < banked.banks.size(); ++k) {
    const MemoryBank& bank = banked.banks[k];
    const allocate::BankUse& use = banked.solution.banks.at(k);
    out += fmt::format(
        R"(<tr data-bank="{}"{}><td>{}</td><td>{}{}</td><td class="num">{:g}</td>{}{}{}<td class="num">{}</td>{})"
        R"(<td class="num">{:.0f}</td></tr>)"
        "\n",
        escape(bank.name), use.fits ? "" : R"( class="over")", escape(bank.name), holds_to_string(bank.holds),
        bank.read_only ? " (read-only)" : "", bank.access_cost, bytes_cell(bank.capacity_bytes),
        bytes_cell(use.solution.arena_bytes), bytes_cell(use.lower_bound_bytes), use.problem.buffers.size(),
        bytes_cell(use.accessed_bytes), use.traffic_cost);
  }
  return out + fmt::format(
                   "</tbody></table>\n<p class=\"note\">Traffic: bytes read and written × the bank's access cost, "
                   "{:.0f} in all against a lower bound of {:.0f} ({}).</p>\n",
                   banked.solution.traffic_cost, banked.solution.lower_bound_cost, escape(banked.solution.method));
}

// One lane per bank that holds a buffer, each on its own byte scale up to its capacity.
std::string bank_lanes(const ReportSubject& s) {
  std::string out;
  const BankedPlacement& banked = *s.plan.banked;
  for (size_t k = 0; k < banked.banks.size(); ++k) {
    if (banked.solution.banks.at(k).problem.buffers.empty()) continue;
    const MemoryPlan view = bank_view(s.plan, static_cast<int>(k));
    const ReportSubject lane{s.graph, view, s.profile, s.model, s.schedule};
    const MemoryBank& bank = banked.banks[k];
    out += fmt::format(
        "<section id=\"bank-{}-section\" class=\"bank\" data-bank=\"{}\">\n<h2>Bank {}: {} of {}, access cost "
        "{:g}</h2>\n",
        k, escape(bank.name), escape(bank.name), human_bytes(view.arena_bytes), human_bytes(bank.capacity_bytes),
        bank.access_cost);
    const int64_t ymax = axis_max(view.arena_bytes, view.capacity_bytes);
    out += arena_svg(lane, fmt::format("arena-bank-{}", k), ymax, 0, 1240);
    out += "</section>\n";
  }
  return out;
}

}  // namespace

std::string plan_report_html(const Graph& graph, const MemoryPlan& plan, const DeviceProfile& profile,
                             const std::string& model_name, const ScheduleResult* schedule) {
  const ReportSubject s{graph, plan, profile, model_name, schedule};
  std::string out = page_open("memledger · " + model_name);
  out += fmt::format("<header>\n<h1>memledger · <span class=\"model\">{}</span></h1>\n<p class=\"sub\">{}</p>\n",
                     escape(model_name), device_line(profile));
  out += verdict_html(s, "verdict");
  out += figures_html(s) + "</header>\n";

  if (plan.banked) {
    out += fmt::format(
        "<section id=\"arena-section\">\n<h2>Banks: where each buffer lives, and when</h2>\n"
        "<p class=\"note\">{} One lane per bank, addresses from the bank's base.</p>\n",
        kArenaNote);
    out += legend(plan) + banks_table(plan) + "</section>\n" + bank_lanes(s);
  } else {
    out += fmt::format(
        "<section id=\"arena-section\">\n<h2>Arena: where each buffer lives, and when</h2>\n"
        "<p class=\"note\">{}</p>\n",
        kArenaNote);
    out += legend(plan);
    const int64_t arena_max = axis_max(plan.arena_bytes, plan.capacity_bytes);
    const int64_t arena_cut = arena_split(plan, arena_max);
    out += arena_svg(s, "arena", arena_max, arena_cut, 1240);
    out += split_note(arena_cut, "addresses", "only buffers that live for the whole program");
    out += "</section>\n";
  }

  out += fmt::format("<section id=\"live-section\">\n<h2>Live at once</h2>\n<p class=\"note\">{}</p>\n", kLiveNote);
  const int64_t live_max = axis_max(std::max(plan.ledger.peak_live_bytes, plan.arena_bytes), plan.capacity_bytes);
  const int64_t live_cut = live_split(plan, live_max);
  out += live_svg(s, "live", live_max, live_cut, 1240);
  out += split_note(live_cut, "bytes", "storage that lives for the whole program");
  out += "</section>\n";

  out +=
      "<div class=\"cols\">\n<section id=\"ledger-section\">\n<h2>Ledger by category</h2>\n"
      "<p class=\"note\">Logical: the values alone. Physical: with alignment and padding (in-place outputs own "
      "none).</p>\n";
  out += category_table(plan);
  out += "</section>\n<section id=\"peak-section\">\n<h2>Biggest at the peak</h2>\n";
  out += contributors_table(plan, 10);
  out += "</section>\n</div>\n";

  out += "<section id=\"buffers-section\">\n" + buffers_table(s) + "</section>\n";
  return out + page_close();
}

std::string compare_report_html(const ReportSubject& before, const ReportSubject& after) {
  std::string out = page_open("memledger · " + before.model + " → " + after.model);
  out += fmt::format(
      "<header>\n<h1>memledger · <span class=\"model\">{}</span> → <span class=\"model\">{}</span></h1>\n"
      "<p class=\"sub\">{}</p>\n",
      escape(before.model), escape(after.model), device_line(after.profile));

  // The figures side by side, with the change.
  const Ledger& lb = before.plan.ledger;
  const Ledger& la = after.plan.ledger;
  out +=
      "<section id=\"change-section\">\n<h2>Before → after</h2>\n<table class=\"compare\"><thead><tr><th></th><th "
      "class=\"num\">before</th><th class=\"num\">after</th>"
      "<th class=\"num\">change</th></tr></thead><tbody>\n";
  const auto row = [&](const std::string& label, int64_t b, int64_t a) {
    out += fmt::format("<tr><td>{}</td>{}{}{}</tr>\n", label, bytes_cell(b), bytes_cell(a), delta_cell(b, a));
  };
  row("<b>peak-live</b>", lb.peak_live_bytes, la.peak_live_bytes);
  row("<b>arena</b>", before.plan.arena_bytes, after.plan.arena_bytes);
  row("logical", lb.logical_bytes, la.logical_bytes);
  row("physical", lb.physical_bytes, la.physical_bytes);
  for (BufferCategory c : kCategories) {
    const auto b = lb.by_category.find(c);
    const auto a = la.by_category.find(c);
    if (b == lb.by_category.end() && a == la.by_category.end()) continue;
    row(fmt::format("<i class=\"sw cat-{}\"></i>{} (physical)", to_string(c), to_string(c)),
        b == lb.by_category.end() ? 0 : b->second.physical_bytes,
        a == la.by_category.end() ? 0 : a->second.physical_bytes);
  }
  out += fmt::format(
      "<tr><td>buffers · steps</td><td class=\"num\">{} · {}</td><td class=\"num\">{} · {}</td><td></td></tr>\n",
      before.plan.liveness.buffers.size(), before.plan.liveness.steps(), after.plan.liveness.buffers.size(),
      after.plan.liveness.steps());
  out += "</tbody></table>\n</section>\n</header>\n";

  // One byte scale for both sides, so equal heights mean equal bytes.
  const int64_t capacity = std::max(before.plan.capacity_bytes, after.plan.capacity_bytes);
  const int64_t arena_max = axis_max(std::max(before.plan.arena_bytes, after.plan.arena_bytes), capacity);
  const int64_t live_max = axis_max(
      std::max({lb.peak_live_bytes, la.peak_live_bytes, before.plan.arena_bytes, after.plan.arena_bytes}), capacity);
  // Compressed only where both sides compress, and then by the smaller amount.
  const int64_t arena_cut = std::min(arena_split(before.plan, arena_max), arena_split(after.plan, arena_max));
  const int64_t live_cut = std::min(live_split(before.plan, live_max), live_split(after.plan, live_max));
  out += "<div class=\"cols\">\n";
  for (const auto& [side, s] : {std::pair<std::string, const ReportSubject*>{"before", &before}, {"after", &after}}) {
    out += fmt::format("<section id=\"{}-section\">\n<h2>{}: <span class=\"model\">{}</span></h2>\n", side,
                       side == "before" ? "Before" : "After", escape(s->model));
    out += verdict_html(*s, side + "-verdict");
    out += "<h3>Arena</h3>\n" + legend(s->plan);
    out += arena_svg(*s, side + "-arena", arena_max, arena_cut, 640);
    out += split_note(arena_cut, "addresses", "only buffers that live for the whole program");
    out += "<h3>Live at once</h3>\n";
    out += live_svg(*s, side + "-live", live_max, live_cut, 640);
    out += split_note(live_cut, "bytes", "storage that lives for the whole program");
    out += "<h3>Ledger by category</h3>\n" + category_table(s->plan);
    out += "<h3>Biggest at the peak</h3>\n" + contributors_table(s->plan, 6);
    out += "</section>\n";
  }
  out += "</div>\n";
  out += fmt::format("<p class=\"note\">{} {}</p>\n", kArenaNote, kLiveNote);
  return out + page_close();
}

}  // namespace memledger
