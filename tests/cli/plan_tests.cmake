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

# `plan --schedule memory` on a randomly wired network (scripts/make_randwire.py --nodes 10
# --channels 4 --size 16 --stages 1 --seeds 3): the exact search finds a lower peak-live than
# the model's order, the plan is for that order, and the report gives both figures.
memledger_cli_test(plan.schedule_memory
  ARGS plan ${PLAN_ONNX}/randwire_ws_n10_s3.onnx --device teaching --brief --schedule memory
       --json ${CMAKE_CURRENT_BINARY_DIR}/plan_schedule.json
  OUTPUT "peak-live 13.31 KiB \\(13632 B\\), arena"
         "order: memory-aware \\(exact-dp, optimal, [0-9.]+ s, [0-9]+ sets\\): peak-live 13.31 KiB \\(13632 B\\) against 15.56 KiB \\(15936 B\\) in the model's order, 1.17x lower")
add_test(NAME cli.plan.schedule_memory_json
         COMMAND ${CMAKE_COMMAND} -DFILE=${CMAKE_CURRENT_BINARY_DIR}/plan_schedule.json
                 "-DCONTAINS=\"order\": \"memory\"<SEP>\"model_order_peak_bytes\": 15936<SEP>\"peak_live_bytes\": 13632<SEP>\"method\": \"exact-dp\""
                 -P ${PROJECT_SOURCE_DIR}/tests/cli/check_file.cmake)
set_tests_properties(cli.plan.schedule_memory PROPERTIES FIXTURES_SETUP plan_schedule_json)
set_tests_properties(cli.plan.schedule_memory_json PROPERTIES FIXTURES_REQUIRED plan_schedule_json)
memledger_cli_test(plan.schedule_model_is_the_default
  ARGS plan ${PLAN_ONNX}/randwire_ws_n10_s3.onnx --device teaching --brief
  OUTPUT "peak-live 15.56 KiB \\(15936 B\\), arena" "order: the model's own \\(a memory-aware order was not searched")
memledger_cli_test(plan.schedule_chain_keeps_the_model_order
  ARGS plan ${PLAN_ONNX}/conv_bn_relu.onnx --brief --schedule memory
  OUTPUT "order: the model's own, kept: no order has a lower peak-live than its")
memledger_cli_test(plan.schedule_bad_kind ARGS plan ${PLAN_ONNX}/conv_bn_relu.onnx --schedule fastest
  EXIT_CODE 2 OUTPUT "--schedule 'fastest': expected model or memory")
memledger_cli_test(plan.schedule_bad_budget ARGS plan ${PLAN_ONNX}/conv_bn_relu.onnx --schedule memory --schedule-budget -1
  EXIT_CODE 2 OUTPUT "--schedule-budget")
# The memory-aware order runs inside its arena, bit-identical to the model order's run.
memledger_cli_test(plan.schedule_memory_arena_run
  ARGS run ${PLAN_ONNX}/randwire_ws_n10_s3.onnx --arena --device teaching --schedule memory
  OUTPUT "memory-aware order \\(exact-dp, optimal\\): peak-live [0-9]+ B against [0-9]+ B"
         "guard violations: 0" "outputs: bit-identical to the ordinary run")
# An unknown placement algorithm: exit 2 listing the registry's names (plan/allocate/planner.h).
memledger_cli_test(plan.unknown_algorithm
  ARGS plan ${PLAN_ONNX}/conv_bn_relu.onnx --algorithm quantum
  EXIT_CODE 2 OUTPUT "--algorithm 'quantum': expected naive, greedy or exact")
