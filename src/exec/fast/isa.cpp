#include "exec/fast/isa.h"

#include <dnnl.hpp>

namespace memledger::exec::fast {

namespace {

// Whether oneDNN runs `level` (or above): its ISA values are bit sets, each level holding
// the bits of the ones below it.
bool onednn_runs(dnnl::cpu_isa level) {
  const auto want = static_cast<unsigned>(level);
  return (static_cast<unsigned>(dnnl::get_effective_cpu_isa()) & want) == want;
}

}  // namespace

Isa effective_isa() {
  static const Isa isa = [] {
    // Our loops need the instructions themselves too, whatever oneDNN was built for.
    if (onednn_runs(dnnl::cpu_isa::avx512_core) && __builtin_cpu_supports("avx512f")) return Isa::kAvx512;
    if (onednn_runs(dnnl::cpu_isa::avx2) && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
      return Isa::kAvx2;
    return Isa::kOlder;
  }();
  return isa;
}

bool has_int8_dot_products() {
  static const bool vnni = (onednn_runs(dnnl::cpu_isa::avx512_core_vnni) && __builtin_cpu_supports("avx512vnni")) ||
                           (onednn_runs(dnnl::cpu_isa::avx2_vnni) && __builtin_cpu_supports("avxvnni"));
  return vnni;
}

std::string_view isa_name(Isa isa) {
  switch (isa) {
    case Isa::kAvx512:
      return "avx512";
    case Isa::kAvx2:
      return "avx2";
    case Isa::kOlder:
      break;
  }
  return "older";
}

}  // namespace memledger::exec::fast
