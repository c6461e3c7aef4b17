// The fast normalisations and reductions: BatchNormalization (oneDNN batch normalization
// with the running statistics), Softmax and LogSoftmax, ReduceMean (oneDNN reduction).
#include "exec/fast/kernel_common.h"

namespace memledger::exec::fast {

void prepare_batch_norm(DnnlNode& node, const Graph& g, const Node& n, const PrepareOptions& options) {
  if (n.int_attr("training_mode", 0) != 0) not_fast("training mode");
  for (size_t i = 1; i < n.outputs.size(); ++i)
    if (n.outputs[i].valid()) not_fast("running statistics outputs");
  const memory::dims x = all_f32_dims(in_value(g, n, 0));
  if (x.size() < 2) not_fast("rank");
  for (size_t i = 1; i <= 4; ++i)
    if (all_f32_dims(in_value(g, n, i)) != memory::dims{x[1]}) not_fast("statistics size");
  const bool cl = channels_last(options, n.inputs[0]);
  const memory src = node.input(0, act_desc(x, cl));
  const memory dst = node.output(0, act_desc(x, cl));
  const memory::desc channel = plain_desc({x[1]}, dt::f32);
  const auto flags = dnnl::normalization_flags::use_global_stats | dnnl::normalization_flags::use_scale |
                     dnnl::normalization_flags::use_shift;
  const dnnl::batch_normalization_forward::desc desc(dnnl::prop_kind::forward_inference, src.get_desc(),
                                                     n.float_attr("epsilon", 1e-5f), flags);
  const auto pd =
      usable(dnnl::batch_normalization_forward::primitive_desc(desc, user_scratchpad_attr(), cpu_engine()), true);
  // oneDNN's NHWC batch norm asks for a scratchpad that some shapes leave untouched (13 of
  // mnasnet0_5.bn's): a workspace the contract would declare but the run not use. Such a
  // node makes its class row-major instead (fast/layout.h).
  if (cl && pd.scratchpad_desc().get_size() > 0) not_fast("channels-last batch norm with a scratchpad");
  Args args{{DNNL_ARG_SRC, src},
            {DNNL_ARG_DST, dst},
            {DNNL_ARG_SCALE, node.input(1, channel)},
            {DNNL_ARG_SHIFT, node.input(2, channel)},
            {DNNL_ARG_MEAN, node.input(3, channel)},
            {DNNL_ARG_VARIANCE, node.input(4, channel)}};
  if (memory pad = node.scratchpad(pd)) args.emplace_back(DNNL_ARG_SCRATCHPAD, pad);
  node.add_step(dnnl::batch_normalization_forward(pd), std::move(args), std::string("bnorm ") + pd.impl_info_str());
  node.set_keeps_in_place_promise();
}

void prepare_softmax(DnnlNode& node, const Graph& g, const Node& n) {
  const Value& xv = in_value(g, n, 0);
  memory::dims x = all_f32_dims(xv);
  const int64_t rank = static_cast<int64_t>(xv.shape.size());
  if (rank == 0) not_fast("scalar");
  int64_t axis = node_axis(n, g.opset < 13 ? 1 : -1, rank);
  if (g.opset < 13) {  // the axes from `axis` on are one row
    int64_t rows = 1, cols = 1;
    for (int64_t i = 0; i < rank; ++i) (i < axis ? rows : cols) *= x[static_cast<size_t>(i)];
    x = {rows, cols};
    axis = 1;
  }
  const memory src = node.input(0, plain_desc(x, dt::f32));
  const memory dst = node.output(0, plain_desc(x, dt::f32));
  const dnnl::softmax_v2_forward::desc desc(dnnl::prop_kind::forward_inference,
                                            n.op == "Softmax" ? algorithm::softmax_accurate : algorithm::softmax_log,
                                            src.get_desc(), dst.get_desc(), static_cast<int>(axis));
  const auto pd = usable(dnnl::softmax_v2_forward::primitive_desc(desc, user_scratchpad_attr(), cpu_engine()), true);
  Args args{{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}};
  if (memory pad = node.scratchpad(pd)) args.emplace_back(DNNL_ARG_SCRATCHPAD, pad);
  node.add_step(dnnl::softmax_v2_forward(pd), std::move(args), std::string("softmax ") + pd.impl_info_str());
}

void prepare_reduce_mean(DnnlNode& node, const Graph& g, const Node& n) {
  const Value& xv = in_value(g, n, 0);
  const memory::dims x = all_f32_dims(xv);
  const int64_t rank = static_cast<int64_t>(xv.shape.size());
  std::vector<int64_t> axes = n.ints_attr("axes");
  if (has_in(n, 1)) {
    const Value& a = g.value(n.inputs[1]);
    if (!a.is_constant()) not_fast("axes not constant");
    axes.clear();
    for (int64_t i = 0; i < a.constant->elements(); ++i)
      axes.push_back(static_cast<int64_t>(a.constant->element_as_double(i)));
  }
  if (axes.empty()) {
    if (n.int_attr("noop_with_empty_axes", 0) != 0) not_fast("noop_with_empty_axes");
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  memory::dims y = x;
  for (int64_t a : axes) {
    if (a < -rank || a >= rank) not_fast("axis");
    y[static_cast<size_t>(a < 0 ? a + rank : a)] = 1;
  }
  const memory src = node.input(0, plain_desc(x, dt::f32));
  const memory dst = node.output(0, plain_desc(y, dt::f32));
  const dnnl::reduction::desc desc(algorithm::reduction_mean, src.get_desc(), dst.get_desc(), 0.0f, 0.0f);
  const auto pd = usable(dnnl::reduction::primitive_desc(desc, user_scratchpad_attr(), cpu_engine()), true);
  Args args{{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}};
  if (memory pad = node.scratchpad(pd)) args.emplace_back(DNNL_ARG_SCRATCHPAD, pad);
  node.add_step(dnnl::reduction(pd), std::move(args), std::string("reduction ") + pd.impl_info_str());
}

}  // namespace memledger::exec::fast
