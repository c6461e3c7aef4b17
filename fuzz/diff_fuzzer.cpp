// libFuzzer target for `memledger diff`'s plan reports (JSON): the input is split at the
// first NUL into BEFORE and AFTER. Any text must give a diff whose parts add up to its
// total, or be refused with a memledger::Error naming the report and field.
#include <cstddef>
#include <cstdint>
#include <string>

#include "memledger/core/error.h"
#include "memledger/report/diff.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const size_t cut = text.find('\0');
  const std::string before = text.substr(0, cut), after = cut == std::string::npos ? text : text.substr(cut + 1);
  try {
    const memledger::ReportDiff d = memledger::diff_reports(before, after, "before.json", "after.json");
    for (const memledger::FigureChange* c : {&d.logical, &d.physical, &d.peak_live})
      if (c->constants + c->layout + c->lifetimes != c->total()) __builtin_trap();
    (void)memledger::format_diff(d);
  } catch (const memledger::Error&) {
  }
  return 0;
}
