// The fast pools (oneDNN pooling): MaxPool, AveragePool and the global ones, in the input's
// byte order.
#include "exec/fast/kernel_common.h"

namespace memledger::exec::fast {

void prepare_pool(DnnlNode& node, const Graph& g, const Node& n, bool max, bool global, const PrepareOptions& options) {
  const Value& xv = in_value(g, n, 0);
  const Value& yv = out_value(g, n);
  if (n.outputs.size() > 1 && n.outputs[1].valid()) not_fast("Indices output");
  // An integer MaxPool whose output keeps the input's parameters is the max of the codes,
  // which oneDNN's s8/u8 max pooling computes exactly (the reference kernel's integers).
  const bool integer = xv.dtype == DType::kInt8 || xv.dtype == DType::kUInt8;
  if (integer && (!max || global || yv.dtype != xv.dtype || !xv.quant || !yv.quant || !(*xv.quant == *yv.quant)))
    not_fast("an integer pool other than a MaxPool keeping its input's quantization");
  const dt type = integer ? dnnl_type(xv.dtype) : dt::f32;
  const memory::dims x = integer ? to_dims(xv.shape) : all_f32_dims(xv);
  const memory::dims y = integer ? to_dims(yv.shape) : all_f32_dims(yv);
  if (x.size() < 3 || x.size() > 5) not_fast("rank");
  Window w;
  if (global) {
    for (size_t i = 2; i < x.size(); ++i) {
      w.kernel.push_back(x[i]);
      w.strides.push_back(1);
      w.dilations.push_back(1);
      w.pad_l.push_back(0);
      w.pad_r.push_back(0);
    }
  } else {
    if (!n.has_attr("kernel_shape")) not_fast("no kernel_shape");
    w = forward_window(n, xv.shape, yv.shape, n.ints_attr("kernel_shape"));
  }
  algorithm alg = algorithm::pooling_max;
  if (!max) {
    const bool include = n.int_attr("count_include_pad", 0) != 0;
    alg = include ? algorithm::pooling_avg_include_padding : algorithm::pooling_avg_exclude_padding;
    // ONNX counts padded positions only up to the stated end pads; oneDNN counts the whole
    // window: they agree when no window reaches past the stated pads.
    if (include && !global) {
      const auto pads = sized_attr(n, "pads", 0, 2 * w.kernel.size());
      for (size_t i = 0; i < w.kernel.size(); ++i)
        if (w.pad_r[i] > pads[w.kernel.size() + i]) not_fast("count_include_pad with ceil_mode");
    }
  }
  const bool cl = channels_last(options, n.inputs[0]);  // the output then too, or neutral
  const memory src = node.input(0, act_desc(x, cl, type));
  const memory dst = node.output(0, act_desc(y, cl, type));
  const dnnl::pooling_v2_forward::desc desc(dnnl::prop_kind::forward_inference, alg, src.get_desc(), dst.get_desc(),
                                            w.strides, w.kernel, dnnl_dilations(w.dilations), w.pad_l, w.pad_r);
  // oneDNN's reference pooling is taken for float (still faster than ours); an integer one
  // (row-major int8, 25x slower than the reference kernel) is not.
  const auto pd = usable(dnnl::pooling_v2_forward::primitive_desc(desc, user_scratchpad_attr(), cpu_engine()),
                         /*allow_ref=*/!integer);
  Args args{{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}};
  if (memory pad = node.scratchpad(pd)) args.emplace_back(DNNL_ARG_SCRATCHPAD, pad);
  node.add_step(dnnl::pooling_v2_forward(pd), std::move(args), std::string("pool ") + pd.impl_info_str());
}

}  // namespace memledger::exec::fast
