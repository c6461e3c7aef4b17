#include "exec/fast/isa.h"

#include <dnnl.hpp>

namespace memledger::exec::fast {

Isa effective_isa() {
  static const Isa isa = [] {
    // oneDNN's ISA values are bit sets: each level holds the bits of the ones below it.
    const auto bits = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
    auto has = [bits](dnnl::cpu_isa level) {
      const auto want = static_cast<unsigned>(level);
      return (bits & want) == want;
    };
    // Our loops need the instructions themselves too, whatever oneDNN was built for.
    if (has(dnnl::cpu_isa::avx512_core) && __builtin_cpu_supports("avx512f")) return Isa::kAvx512;
    if (has(dnnl::cpu_isa::avx2) && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Isa::kAvx2;
    return Isa::kOlder;
  }();
  return isa;
}

bool has_int8_dot_products() {
  static const bool vnni = [] {
    const auto bits = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
    auto has = [bits](dnnl::cpu_isa level) {
      const auto want = static_cast<unsigned>(level);
      return (bits & want) == want;
    };
    return (has(dnnl::cpu_isa::avx512_core_vnni) && __builtin_cpu_supports("avx512vnni")) ||
           (has(dnnl::cpu_isa::avx2_vnni) && __builtin_cpu_supports("avxvnni"));
  }();
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
