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

// Whether oneDNN's int8 kernels have the dot-product instructions (AVX512-VNNI or AVX-VNNI:
// u8·s8 products summed straight into int32). Without them oneDNN sums pairs of products in
// int16 and halves signed-input weights to keep from saturating (jit_int8:avx512_core,
// jit_uni_int8:avx2): a 3×3 Conv with int8 input was off by up to 7 LSB in 40 % of its
// outputs, so the fast set runs integer Convs only where this holds. Capped by
// ONEDNN_MAX_CPU_ISA as effective_isa() is (AVX2 and AVX512_CORE exclude VNNI).
bool has_int8_dot_products();
std::string_view isa_name(Isa isa);  // "avx512", "avx2", "older"

}  // namespace memledger::exec::fast
