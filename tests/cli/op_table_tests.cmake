# Operators without a kernel can be planned: an operator the op table does not know is
# refused by plan (naming the profile section that would declare it) until a profile
# declares its rules; run refuses any operator without a kernel by name.
set(_onnx ${PROJECT_SOURCE_DIR}/tests/data/onnx)
set(_device ${PROJECT_SOURCE_DIR}/tests/data/device)
memledger_cli_test(plan_unknown_operator ARGS plan ${_onnx}/custom_op.onnx
  EXIT_CODE 2 OUTPUT "node FancyNorm 'fancy': operator com.example.FancyNorm is not in the op table; a device profile may declare its rules in \\[ops.com.example.FancyNorm\\]")
memledger_cli_test(plan_declared_operator ARGS plan ${_onnx}/custom_op.onnx --device ${_device}/custom_ops.toml
  OUTPUT "device: npu-custom-ops" "fancy.workspace workspace +384 B" "y +output +192 B +192 B +1–1 +0 +r"
         "peak-live 576 B")
memledger_cli_test(plan_declared_operator_sim ARGS plan ${_onnx}/custom_op.onnx --device ${_device}/custom_ops.toml --sim
  OUTPUT "FancyNorm")
memledger_cli_test(run_declared_operator_has_no_kernel ARGS run ${_onnx}/custom_op.onnx
  EXIT_CODE 2 OUTPUT "operator com.example.FancyNorm has no kernel: memledger can plan it but not run it")
memledger_cli_test(plan_table_operator_without_kernel ARGS plan ${_onnx}/lrn.onnx OUTPUT "peak-live")
memledger_cli_test(run_table_operator_without_kernel ARGS run ${_onnx}/lrn.onnx
  EXIT_CODE 2 OUTPUT "node LRN 'lrn': operator LRN has no kernel")
unset(_onnx)
unset(_device)
