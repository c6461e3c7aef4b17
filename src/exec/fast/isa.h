// The vector instruction set the fast set runs on: the one oneDNN runs
// (dnnl::get_effective_cpu_isa, which the environment variable ONEDNN_MAX_CPU_ISA caps), so that
// oneDNN's choices and the fast set's own loops follow one switch and a capped run on an
// AVX-512 machine does what an AVX2-only machine does.
#pragma once

#include <string_view>

namespace memledger::exec::fast {

enum class Isa {
  kOlder,   // below AVX2 (or not x86-64): oneDNN's kernels only
  kAvx2,    // AVX2 with FMA: oneDNN's avx2 kernels, the fast set's 8-wide loops
  kAvx512,  // AVX-512 (oneDNN's avx512_core): its brgemm and Winograd kernels, 16-wide loops
};

// Read once, at the first call (oneDNN fixes its own choice then too).
Isa effective_isa();
std::string_view isa_name(Isa isa);  // "avx512", "avx2", "older"

}  // namespace memledger::exec::fast
