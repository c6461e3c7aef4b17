#include "memledger/report/diff.h"

#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

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

int64_t field(const json& j, const char* key, const std::string& where) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number_integer())
    fail("{}: field '{}' missing or not an integer", where, key);
  return j[key].get<int64_t>();
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
  if (r.contains("timeline") && r["timeline"].is_array()) {
    int64_t best = -1;
    for (const json& step : r["timeline"]) {
      const int64_t live = field(step, "live_bytes", name + " timeline");
      if (live > best && step.contains("live") && step["live"].is_array()) {
        best = live;
        at_peak.clear();
        for (const json& b : step["live"]) at_peak.insert(b.get<std::string>());
      }
    }
  }
  if (r.contains("buffers") && r["buffers"].is_array()) {
    for (const json& b : r["buffers"]) {
      const std::string where = name + " buffer";
      const int64_t logical = field(b, "logical_bytes", where), physical = field(b, "physical_bytes", where);
      const bool constant = b.value("category", "") == "constant";
      const bool owning = !b.contains("alias_of") || b["alias_of"].is_null();
      (constant ? s.logical.constants : s.logical.lifetimes) += logical;
      if (!owning) continue;
      const auto add = [&](Parts& p) {
        (constant ? p.constants : p.lifetimes) += logical;
        p.layout += physical - logical;
      };
      add(s.physical);
      if (at_peak.count(b.value("name", "")) != 0) add(s.peak);
    }
  }
  // What the buffers do not explain goes to lifetimes, so the parts sum to the figure.
  for (Parts* p : {&s.logical, &s.physical, &s.peak})
    p->lifetimes += p->figure - p->constants - p->layout - p->lifetimes;
  return s;
}

FigureChange change(const Parts& a, const Parts& b) {
  return {.before = a.figure,
          .after = b.figure,
          .constants = b.constants - a.constants,
          .layout = b.layout - a.layout,
          .lifetimes = b.lifetimes - a.lifetimes};
}

std::string model_of(const std::string& text) {
  try {
    const json r = json::parse(text);
    return r.value("model", "");
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
