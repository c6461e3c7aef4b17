#include "memledger/report/diff.h"

#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "memledger/core/checked.h"
#include "memledger/core/error.h"

namespace memledger {
namespace {

using json = nlohmann::json;

struct Parts {
  int64_t figure = 0;  // the report's own figure
  int64_t constants = 0, layout = 0, lifetimes = 0;
};

struct Split {
  Parts logical, physical, peak;
};

// A byte count: an integer in [0, 2^63).
int64_t field(const json& j, const char* key, const std::string& where) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number_integer())
    fail("{}: field '{}' missing or not an integer", where, key);
  const json& v = j[key];
  if (v.is_number_unsigned() ? v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX) : v.get<int64_t>() < 0)
    fail("{}: field '{}' is {}, not a byte count in [0, 2^63)", where, key, v.dump());
  return v.get<int64_t>();
}

// An optional string member: absent or null is empty; anything but a string is an Error.
std::string string_field(const json& j, const char* key, const std::string& where) {
  if (!j.is_object() || !j.contains(key) || j[key].is_null()) return {};
  if (!j[key].is_string()) fail("{}: field '{}' is not a string", where, key);
  return j[key].get<std::string>();
}

int64_t sub(int64_t a, int64_t b, const std::string& where) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) fail("{}: overflows 64 bits ({} − {})", where, a, b);
  return r;
}

// Adds one buffer's bytes to the parts (see diff.h's attribution rule).
void count_buffer(Split& s, int64_t logical, int64_t physical, bool constant, bool owning, bool live_at_peak,
                  const std::string& where) {
  int64_t& logical_part = constant ? s.logical.constants : s.logical.lifetimes;
  logical_part = checked_add(logical_part, logical, where);
  if (!owning) return;
  const auto add = [&](Parts& p) {
    int64_t& part = constant ? p.constants : p.lifetimes;
    part = checked_add(part, logical, where);
    p.layout = checked_add(p.layout, sub(physical, logical, where), where);
  };
  add(s.physical);
  if (live_at_peak) add(s.peak);
}

// What the buffers do not explain goes to lifetimes, so the parts sum to the figure.
void finish(Split& s, const std::string& name) {
  for (Parts* p : {&s.logical, &s.physical, &s.peak})
    p->lifetimes = sub(sub(p->figure, p->constants, name), p->layout, name);
}

Split split_report(const std::string& text, const std::string& name) {
  json r;
  try {
    r = json::parse(text);
  } catch (const json::exception& e) {
    fail("{}: not JSON: {}", name, e.what());
  }
  if (!r.is_object() || !r.contains("ledger")) fail("{}: no 'ledger' (not a memledger plan report)", name);
  const json& ledger = r["ledger"];
  Split s;
  s.logical.figure = field(ledger, "logical_bytes", name + " ledger");
  s.physical.figure = field(ledger, "physical_bytes", name + " ledger");
  s.peak.figure = field(ledger, "peak_live_bytes", name + " ledger");

  std::set<std::string> at_peak;
  const auto add_names = [&](const json& list, const std::string& where) {
    for (const json& b : list) {
      if (!b.is_string()) fail("{}: holds {}, not a buffer name", where, b.type_name());
      at_peak.insert(b.get<std::string>());
    }
  };
  if (ledger.contains("live_at_peak")) {  // schema 2
    if (!ledger["live_at_peak"].is_array()) fail("{} ledger: 'live_at_peak' is not a list", name);
    add_names(ledger["live_at_peak"], name + " ledger: 'live_at_peak'");
  } else if (r.contains("timeline") && r["timeline"].is_array()) {  // schema 1: each step lists its live buffers
    int64_t best = -1;
    for (const json& step : r["timeline"]) {
      const int64_t live = field(step, "live_bytes", name + " timeline");
      if (live > best && step.contains("live") && step["live"].is_array()) {
        best = live;
        at_peak.clear();
        add_names(step["live"], name + " timeline: 'live'");
      }
    }
  }
  if (r.contains("buffers") && r["buffers"].is_array()) {
    for (const json& b : r["buffers"]) {
      const std::string where = name + " buffer";
      count_buffer(s, field(b, "logical_bytes", where), field(b, "physical_bytes", where),
                   string_field(b, "category", where) == "constant", !b.contains("alias_of") || b["alias_of"].is_null(),
                   at_peak.count(string_field(b, "name", where)) != 0, where);
    }
  }
  finish(s, name);
  return s;
}

// The same split read straight from a plan: the report's JSON is one adapter, this another.
Split split_plan(const MemoryPlan& plan, const std::string& name) {
  Split s;
  s.logical.figure = plan.ledger.logical_bytes;
  s.physical.figure = plan.ledger.physical_bytes;
  s.peak.figure = plan.ledger.peak_live_bytes;
  // The first step of the largest live bytes, as the report's live_at_peak has it.
  std::set<int> at_peak;
  if (!plan.ledger.timeline.empty()) {
    const std::vector<int> live = live_buffers_at(plan.liveness, plan.ledger.peak_step);
    at_peak.insert(live.begin(), live.end());
  }
  for (size_t i = 0; i < plan.liveness.buffers.size(); ++i) {
    const LiveBuffer& b = plan.liveness.buffers[i];
    count_buffer(s, b.logical_bytes, b.physical_bytes, b.category == BufferCategory::kConstant, !b.alias_of,
                 at_peak.count(static_cast<int>(i)) != 0, name + " buffer");
  }
  finish(s, name);
  return s;
}

FigureChange change(const Parts& a, const Parts& b) {
  const std::string what = "the change between the reports";
  return {.before = a.figure,
          .after = b.figure,
          .constants = sub(b.constants, a.constants, what),
          .layout = sub(b.layout, a.layout, what),
          .lifetimes = sub(b.lifetimes, a.lifetimes, what)};
}

std::string model_of(const std::string& text) {
  try {
    const json r = json::parse(text);
    if (!r.is_object() || !r.contains("model") || !r["model"].is_string()) return "";
    return r["model"].get<std::string>();
  } catch (const json::exception&) {
    return "";
  }
}

}  // namespace

ReportDiff diff_reports(const std::string& before_json, const std::string& after_json, const std::string& before_name,
                        const std::string& after_name) {
  const Split a = split_report(before_json, before_name), b = split_report(after_json, after_name);
  return {.model_before = model_of(before_json),
          .model_after = model_of(after_json),
          .logical = change(a.logical, b.logical),
          .physical = change(a.physical, b.physical),
          .peak_live = change(a.peak, b.peak)};
}

ReportDiff diff_plans(const MemoryPlan& before, const MemoryPlan& after, const std::string& before_name,
                      const std::string& after_name) {
  const Split a = split_plan(before, before_name), b = split_plan(after, after_name);
  return {.model_before = before_name,
          .model_after = after_name,
          .logical = change(a.logical, b.logical),
          .physical = change(a.physical, b.physical),
          .peak_live = change(a.peak, b.peak)};
}

std::string format_diff(const ReportDiff& d) {
  std::string out = fmt::format("{:<10} {:>12} {:>12} {:>12} | {:>12} {:>12} {:>12}\n", "figure", "before", "after",
                                "change", "constants", "layout", "lifetimes");
  const auto row = [&](const char* name, const FigureChange& c) {
    out += fmt::format("{:<10} {:>12} {:>12} {:>+12} | {:>+12} {:>+12} {:>+12}\n", name, c.before, c.after, c.total(),
                       c.constants, c.layout, c.lifetimes);
  };
  row("logical", d.logical);
  row("physical", d.physical);
  row("peak-live", d.peak_live);
  return out;
}

}  // namespace memledger
