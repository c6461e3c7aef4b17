# `plan` under profiles that keep constants and graph inputs outside the arena: the ledger's
# "external" column, "external" in place of an offset, and peak-live with and without the
# graph inputs, saying which one the arena's figure is.
set(PLAN_ONNX ${PROJECT_SOURCE_DIR}/tests/data/onnx)
memledger_cli_test(plan.external_file_profile
  ARGS plan ${PLAN_ONNX}/conv_bn_relu.onnx --device ${PROJECT_SOURCE_DIR}/tests/data/device/mcu_flash.toml
  OUTPUT "constants external, inputs external"
         "category +count +logical +physical +external +at the peak"
         "constant +8 +153 B +156 B +156 B +0 B"
         "input +1 +192 B +192 B +192 B +0 B"
         "total +16 .* +348 B +1.94 KiB"
         "x +input +192 B +192 B +0–0 +external"
         "peak-live 1.94 KiB \\(1984 B\\), arena 1.94 KiB"
         "peak-live leaves out the graph inputs \\(they are outside the arena\\): 2.12 KiB \\(2176 B\\) with them, 1.94 KiB \\(1984 B\\) without")
memledger_cli_test(plan.inputs_in_arena_are_counted
  ARGS plan ${PLAN_ONNX}/conv_bn_relu.onnx --device host --brief
  OUTPUT "peak-live counts the graph inputs \\(they are in the arena\\)"
  NOT_OUTPUT "external")
memledger_cli_test(plan.builtin_mcu ARGS plan ${PLAN_ONNX}/affine_distinct.onnx --device mcu --brief
  OUTPUT "mcu \\(built-in\\): capacity 262144 B, alignment 4 B, NHWC, aligned run = tensor, storage int8, constants external, inputs external")
