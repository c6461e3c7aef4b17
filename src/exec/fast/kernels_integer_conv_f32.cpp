// The integer Conv where oneDNN's int8 convolution cannot give the reference kernel's
// integers: on machines without int8 dot products (oneDNN then halves signed weights) and
// under TFLite's fixed-point rule (oneDNN requantizes in float). The sums are oneDNN's f32
// convolution over the codes, which is exact: x − z_x lies within ±255, a weight code within
// ±128, so every product is an integer under 2^15 and every partial sum, in any order, is
// bounded by 255·Σ|w| over the map's taps; where that bound stays under 2^24 (checked per map
// at preparation) every sum is an exactly representable float. Where it does not, an
// ungrouped Conv's input channels split into up to 8 ranges, one f32 convolution each, whose
// sums meet in int32; else the reference kernel runs the node. Around the primitive, the fast set's own loops: the
// codes to floats (x − z_x, channels-last; a tap in the padding is then 0, as the reference's zero point is), and the
// int32 sums plus the int32 bias requantized by the reference's very Requantizer. So the result is the reference
// kernel's, bit for bit, under either rule, on every machine.
#include <algorithm>
#include <cmath>

#include "exec/fast/kernel_common.h"
#include "exec/fast/parallel.h"
#include "exec/integer_elementwise.h"
#include "exec/quantized.h"
#include "exec/requantize.h"

namespace memledger::exec::fast {
namespace {

constexpr double kExactFloatBound = 16777216.0;  // 2^24: every integer up to it is a float

// Strides of `d` ([N, C, spatial...]) with the channels innermost (NHWC for 4-d, NWC, NDHWC).
memory::dims channels_last_strides(const memory::dims& d) {
  memory::dims s(d.size());
  int64_t stride = d[1];
  for (size_t i = d.size(); i-- > 2;) {
    s[i] = stride;
    stride *= d[i];
  }
  s[1] = 1;
  s[0] = stride;
  return s;
}

bool is_8bit(const Value& v) { return (v.dtype == DType::kInt8 || v.dtype == DType::kUInt8) && v.quant; }

}  // namespace

ExactConvSpec exact_conv_spec(const Graph& g, const Node& n, const PrepareOptions& options) {
  const Value& xv = in_value(g, n, 0);
  const Value& wv = in_value(g, n, 1);
  const Value& yv = out_value(g, n);
  if (!is_8bit(xv) || !is_8bit(yv) || !is_8bit(wv)) not_fast("not 8-bit quantized operands");
  if (wv.dtype != DType::kInt8 || !wv.is_constant()) not_fast("weights other than int8 constants");
  const Quantization &xq = *xv.quant, &wq = *wv.quant, &yq = *yv.quant;
  if (std::any_of(wq.zero_points.begin(), wq.zero_points.end(), [](int64_t z) { return z != 0; }))
    not_fast("weights with a zero point other than 0");

  const IntegerConvGeometry geo = integer_conv_geometry(g, n);
  ExactConvSpec spec;
  spec.x = geo.x, spec.y = geo.y;
  spec.weights = plain_desc(geo.weights, dt::s8);
  spec.group = geo.group, spec.maps = geo.maps, spec.group_channels = geo.group_channels;
  spec.window = geo.window;
  // [M, C/g, k...]: map m's taps over group channel c are contiguous.
  const Tensor& weights = *wv.constant;
  const int64_t kvol = weights.elements() / std::max<int64_t>(spec.maps * spec.group_channels, 1);
  const int8_t* codes = weights.data<int8_t>().data();
  spec.weight_abs.assign(static_cast<size_t>(spec.maps * spec.group_channels), 0.0);
  for (int64_t mc = 0; mc < spec.maps * spec.group_channels; ++mc)
    for (int64_t k = 0; k < kvol; ++k)
      spec.weight_abs[static_cast<size_t>(mc)] += std::abs(static_cast<double>(codes[mc * kvol + k]));
  spec.x_zero = static_cast<int32_t>(xq.zero_point());
  spec.x_range = quant_range(xv.dtype);
  spec.rule = g.requantization;
  for (int64_t m = 0; m < (wq.scales.size() == 1 ? 1 : spec.maps); ++m)
    spec.multipliers.push_back(real_multiplier(g.requantization, xq.scale(), wq.scale(m), yq.scale()));
  spec.y_zero = static_cast<int32_t>(yq.zero_point());
  spec.y_range = quant_range(yv.dtype);
  spec.src_cl = channels_last(options, n.inputs[0]);
  spec.dst_cl = channels_last(options, n.outputs[0]);
  spec.has_bias = has_in(n, 2);
  return spec;
}

void prepare_integer_conv_f32(DnnlNode& node, const Graph& g, const Node& n, const PrepareOptions& options) {
  prepare_exact_conv(node, g, n, exact_conv_spec(g, n, options), options);
}

void prepare_integer_gemm_f32(DnnlNode& node, const Graph& g, const Node& n, const PrepareOptions& options) {
  const Value& av = in_value(g, n, 0);
  const Value& bv = in_value(g, n, 1);
  const Value& yv = out_value(g, n);
  if (!is_8bit(av) || !is_8bit(yv) || bv.dtype != DType::kInt8 || !bv.is_constant())
    not_fast("a Gemm other than 8-bit activations and int8 constant weights");
  const auto [M, N, K, tb] = integer_gemm_shape(g, n);
  const Quantization &xq = *av.quant, &wq = *bv.quant, &yq = *yv.quant;
  if (std::any_of(wq.zero_points.begin(), wq.zero_points.end(), [](int64_t z) { return z != 0; }))
    not_fast("weights with a zero point other than 0");
  // A 1×1 convolution over the rows (as TFLite's FULLY_CONNECTED): A's rows the positions,
  // B's columns the maps, B described by its strides ([N, K] or [K, N]) and never copied.
  ExactConvSpec spec;
  spec.x = {M, K, 1, 1};
  spec.y = {M, N, 1, 1};
  spec.weights = memory::desc({N, K, 1, 1}, dt::s8, tb ? memory::dims{K, 1, 1, 1} : memory::dims{1, N, 1, 1});
  spec.maps = N, spec.group_channels = K;
  const int8_t* codes = bv.constant->data<int8_t>().data();
  spec.weight_abs.resize(static_cast<size_t>(N * K));
  for (int64_t m = 0; m < N; ++m)
    for (int64_t c = 0; c < K; ++c)
      spec.weight_abs[static_cast<size_t>(m * K + c)] = std::abs(codes[tb ? m * K + c : c * N + m]);
  Window& w = spec.window;
  w.kernel = {1, 1}, w.strides = {1, 1}, w.dilations = {1, 1}, w.pad_l = {0, 0}, w.pad_r = {0, 0};
  spec.x_zero = static_cast<int32_t>(xq.zero_point());
  spec.x_range = quant_range(av.dtype);
  spec.rule = g.requantization;
  for (int64_t m = 0; m < (wq.scales.size() == 1 ? 1 : N); ++m)
    spec.multipliers.push_back(real_multiplier(g.requantization, xq.scale(), wq.scale(m), yq.scale()));
  spec.y_zero = static_cast<int32_t>(yq.zero_point());
  spec.y_range = quant_range(yv.dtype);
  spec.src_cl = spec.dst_cl = true;  // [M, K] rows: the channels innermost
  spec.has_bias = has_in(n, 2);
  prepare_exact_conv(node, g, n, spec, options);
}

void prepare_exact_conv(DnnlNode& node, const Graph& g, const Node& n, const ExactConvSpec& spec,
                        const PrepareOptions& options) {
  const Value& xv = in_value(g, n, 0);
  const Value& wv = in_value(g, n, 1);
  const Value& yv = out_value(g, n);
  const memory::dims &x = spec.x, &y = spec.y;
  const int64_t group = spec.group, maps = spec.maps, cg = spec.group_channels;
  const Window& w = spec.window;

  // Every sum exact in float: the input channels split into `parts` contiguous ranges (one,
  // unless some map's 255·Σ|w| passes 2^24; then, for an ungrouped Conv, up to 8), each range's
  // sums bounded by the largest |x − z_x| times the map's weights over it, under 2^24; the
  // ranges' sums are added in int32.
  const int32_t zx = spec.x_zero;
  const double span = std::max(zx - spec.x_range.lo, spec.x_range.hi - zx);
  const Tensor& weights_tensor = *wv.constant;
  auto range_start = [cg](int64_t parts, int64_t j) { return j * cg / parts; };
  auto exact_in = [&](int64_t parts) {
    for (int64_t j = 0; j < parts; ++j)
      for (int64_t m = 0; m < maps; ++m) {
        double sum = 0;
        for (int64_t c = range_start(parts, j); c < range_start(parts, j + 1); ++c)
          sum += spec.weight_abs[static_cast<size_t>(m * cg + c)];
        if (span * sum >= kExactFloatBound) return false;
      }
    return true;
  };
  int64_t parts = 1;
  for (; !exact_in(parts); ++parts)
    if (group != 1 || parts == 8 || parts == cg)
      not_fast("sums that may pass 2^24, where float stops being exact, in 8 channel ranges or fewer");
  const std::vector<double>& multipliers = spec.multipliers;
  const Requantizer requantize(spec.rule, multipliers, spec.y_zero, spec.y_range);

  // Per channel range: its input codes as floats (channels-last), its weights (a view of the
  // constant's), its maps' sums.
  struct Range {
    int64_t start, width;
    memory xf, yf;
  };
  std::vector<Range> ranges;
  const memory::desc& weights_desc = spec.weights;
  for (int64_t j = 0; j < parts; ++j) {
    // (One range of all channels, or, ungrouped, cg = C split: a range of the input's channels.)
    Range r{range_start(parts, j), parts == 1 ? x[1] : range_start(parts, j + 1) - range_start(parts, j), {}, {}};
    memory::dims xr_dims = x;
    xr_dims[1] = r.width;
    r.xf = node.workspace(memory::desc(xr_dims, dt::f32, channels_last_strides(xr_dims)));
    r.yf = node.workspace(memory::desc(y, dt::f32, channels_last_strides(y)));
    ranges.push_back(r);
  }

  // The codes as floats x − z_x, channels-last, one buffer per range.
  const bool src_cl = spec.src_cl, dst_cl = spec.dst_cl;
  const int64_t batches = x[0], channels = x[1], plane = element_count(xv.shape, xv.name) / (batches * channels);
  node.add_loop(
      [ranges, src_cl, batches, channels, plane, zx](KernelContext& ctx) {
        with_8bit_type(ctx.in(0).dtype, [&](auto t) {
          const auto* in = ctx.in(0).as<decltype(t)>();
          for (const Range& r : ranges) {
            auto* out = static_cast<float*>(r.xf.get_data_handle());
            const int64_t width = r.width, start = r.start;
            const int32_t zero = zx;
            if (src_cl) {
              parallel_ranges(batches * plane, std::max<int64_t>(kLoopGrain / width, 1),
                              [in, out, width, start, zero, channels](int64_t begin, int64_t end, int) {
                                for (int64_t p = begin; p < end; ++p)
                                  for (int64_t c = 0; c < width; ++c)
                                    out[p * width + c] =
                                        static_cast<float>(static_cast<int32_t>(in[p * channels + start + c]) - zero);
                              });
              continue;
            }
            parallel_ranges(batches * width, std::max<int64_t>(kLoopGrain / plane, 1),
                            [in, out, width, start, zero, channels, plane](int64_t begin, int64_t end, int) {
                              for (int64_t bc = begin; bc < end; ++bc) {
                                const int64_t b = bc / width, c = bc % width;
                                const auto* row = in + (b * channels + start + c) * plane;
                                float* column = out + b * plane * width + c;
                                for (int64_t s = 0; s < plane; ++s)
                                  column[s * width] = static_cast<float>(static_cast<int32_t>(row[s]) - zero);
                              }
                            });
          }
        });
      },
      "memledger codes to float");
  for (const Range& r : ranges) {
    memory::dims wr = weights_desc.dims(), offsets(wr.size(), 0);
    if (parts > 1) {  // ungrouped: [M, C, k...]
      wr[1] = r.width;
      offsets[1] = r.start;
    }
    const memory weights = node.input(1, parts == 1 ? weights_desc : weights_desc.submemory_desc(wr, offsets));
    const dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, algorithm::convolution_direct,
                                               r.xf.get_desc(), memory::desc(wr, dt::f32, memory::format_tag::any),
                                               memory::desc(), r.yf.get_desc(), w.strides, dnnl_dilations(w.dilations),
                                               w.pad_l, w.pad_r);
    const auto pd = usable(dnnl::convolution_forward::primitive_desc(desc, user_scratchpad_attr(), cpu_engine()),
                           /*allow_ref=*/false);
    const memory weights_in = node.constant_reordered(weights, weights_tensor, pd.weights_desc(), options);
    Args args{{DNNL_ARG_SRC, r.xf}, {DNNL_ARG_WEIGHTS, weights_in}, {DNNL_ARG_DST, r.yf}};
    if (memory pad = node.scratchpad(pd)) args.emplace_back(DNNL_ARG_SCRATCHPAD, pad);
    node.add_step(dnnl::convolution_forward(pd), std::move(args), std::string("exact f32 conv ") + pd.impl_info_str());
  }

  // The sums (integers, as floats) plus the bias, requantized into the output's order: the
  // float-scale rule as integer_elementwise.h's round_with_zero_to_code (the same integers as
  // the Requantizer's, in a loop that vectorizes), the fixed-point one by the Requantizer.
  const bool has_bias = spec.has_bias;
  const int64_t out_plane = element_count(yv.shape, yv.name) / (batches * maps);
  std::vector<float> scales;
  if (spec.rule == Requantization::kFloatScale)
    for (int64_t m = 0; m < maps; ++m)
      scales.push_back(static_cast<float>(multipliers[multipliers.size() == 1 ? 0 : m]));
  const int32_t zy = spec.y_zero;
  const QuantRange yr = spec.y_range;
  // Two rows in the workspace per thread (64-byte strides): one position's int32 sums, and its
  // output codes before a row-major output's transposing store.
  const int threads = std::max(options.threads, 1);
  const int64_t sum_stride = (maps + 15) / 16 * 16, code_stride = (maps + 63) / 64 * 64;
  const memory sum_rows = node.workspace(plain_desc({threads * sum_stride}, dt::s32));
  const memory code_rows = node.workspace(plain_desc({threads * code_stride}, dt::u8));
  node.add_loop(
      [ranges, sum_rows, code_rows, sum_stride, code_stride, threads, dst_cl, has_bias, batches, maps, out_plane,
       requantize, scales, zy, yr](KernelContext& ctx) {
        const int32_t* bias = has_bias ? ctx.in(2).as<int32_t>() : nullptr;
        const int64_t count = maps;
        // Positions in ranges, one per thread, each with its own rows.
        parallel_ranges(
            batches * out_plane, std::max<int64_t>(kLoopGrain / count, 1),
            [&](int64_t begin, int64_t end, int thread) {
              auto* sums = static_cast<int32_t*>(sum_rows.get_data_handle()) + thread * sum_stride;
              // Position p's sums: each range's (exact integers, as floats) plus the bias.
              auto sum_position = [&](int64_t p) {
                const auto* first = static_cast<const float*>(ranges[0].yf.get_data_handle()) + p * count;
                if (bias) {
                  const int32_t* add = bias;
                  for (int64_t m = 0; m < count; ++m) sums[m] = static_cast<int32_t>(first[m]) + add[m];
                } else {
                  for (int64_t m = 0; m < count; ++m) sums[m] = static_cast<int32_t>(first[m]);
                }
                for (size_t j = 1; j < ranges.size(); ++j) {
                  const auto* more = static_cast<const float*>(ranges[j].yf.get_data_handle()) + p * count;
                  for (int64_t m = 0; m < count; ++m) sums[m] += static_cast<int32_t>(more[m]);
                }
              };
              with_8bit_type(ctx.out().dtype, [&](auto t) {
                using Y = decltype(t);
                Y* out = ctx.out().as<Y>();
                // The sums requantized into row (contiguous).
                auto requantize_row = [&](Y* row) {
                  const int32_t* in = sums;  // locals (as below): the byte stores may not alias them
                  const int64_t entries = maps;
                  if (!scales.empty()) {
                    const float* scale = scales.data();
                    const int32_t zero = zy;
                    const QuantRange range = yr;
                    for (int64_t m = 0; m < entries; ++m)
                      row[m] =
                          static_cast<Y>(round_with_zero_to_code(static_cast<float>(in[m]) * scale[m], zero, range));
                    return;
                  }
                  for (int64_t m = 0; m < entries; ++m)
                    row[m] = static_cast<Y>(requantize(in[m], static_cast<size_t>(m)));
                };
                Y* row = static_cast<Y*>(code_rows.get_data_handle()) + thread * code_stride;
                // One range under the float-scale rule: straight from its sums, in one pass.
                const bool one_pass = ranges.size() == 1 && !scales.empty();
                const auto* only = static_cast<const float*>(ranges[0].yf.get_data_handle());
                auto one_pass_row = [&](int64_t p, Y* target) {
                  const float* in = only + p * maps;
                  const float* scale = scales.data();
                  const int32_t zero = zy;  // locals: the byte stores may not alias them
                  const QuantRange range = yr;
                  const int64_t entries = maps;
                  if (bias) {
                    const int32_t* add = bias;
                    for (int64_t m = 0; m < entries; ++m)
                      target[m] = static_cast<Y>(round_with_zero_to_code(
                          static_cast<float>(static_cast<int32_t>(in[m]) + add[m]) * scale[m], zero, range));
                  } else {
                    for (int64_t m = 0; m < entries; ++m)
                      target[m] = static_cast<Y>(round_with_zero_to_code(
                          static_cast<float>(static_cast<int32_t>(in[m])) * scale[m], zero, range));
                  }
                };
                for (int64_t p = begin; p < end; ++p) {
                  Y* target = dst_cl ? out + p * count : row;  // row-major: a transposing store after
                  if (one_pass) {
                    one_pass_row(p, target);
                  } else {
                    sum_position(p);
                    requantize_row(target);
                  }
                  if (dst_cl) continue;
                  Y* at = out + (p / out_plane) * count * out_plane + p % out_plane;
                  for (int64_t m = 0; m < count; ++m) at[m * out_plane] = row[m];
                }
              });
            },
            threads);
      },
      "memledger requantization");
  // Input and output meet only through the workspace copies.
  node.set_keeps_in_place_promise();
}

}  // namespace memledger::exec::fast
