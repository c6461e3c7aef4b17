# `memledger plan --sim`: NPU mode's tiles, local peaks and DMA traffic ledger
# (docs/npu-mode.md). Active once cmd_plan.cpp has the --sim flag.
file(READ ${PROJECT_SOURCE_DIR}/tools/memledger/cmd_plan.cpp SIM_PLAN_SOURCE)
if(SIM_PLAN_SOURCE MATCHES "\"--sim\"")
  set(SIM_ONNX ${PROJECT_SOURCE_DIR}/tests/data/onnx)
  memledger_cli_test(sim.teaching_affine
    ARGS plan ${SIM_ONNX}/affine_distinct.onnx --device teaching --brief --sim
    OUTPUT "NPU mode: device 'teaching', local memory 32768 B" "ideal \\(every byte moved once\\)"
           "traffic ratio ×[0-9.]+ bytes, ×[0-9.]+ cycles")
  memledger_cli_test(sim.npu256k_conv
    ARGS plan ${SIM_ONNX}/conv_bn_relu.onnx --device ${PROJECT_SOURCE_DIR}/tests/data/device/npu256k.toml --brief --sim
    OUTPUT "NPU mode: device 'npu256k'" "double buffering on" "\\(Conv, conv\\)")
  memledger_cli_test(sim.needs_external_memory
    ARGS plan ${SIM_ONNX}/affine_distinct.onnx --device host --sim EXIT_CODE 2
    OUTPUT "NPU mode needs local and external memory")
endif()
