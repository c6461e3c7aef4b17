# `plan` on devices with memory banks: the per-bank ledger and each buffer's bank, strict
# [[banks]] parsing (exit 2 naming the key), and a plan that fits no bank (exit 3 naming it).
set(BANK_ONNX ${PROJECT_SOURCE_DIR}/tests/data/onnx)
set(BANK_DEVICES ${PROJECT_SOURCE_DIR}/tests/data/device)
memledger_cli_test(plan.banks_stm32h743
  ARGS plan ${BANK_ONNX}/randwire_ws_n10_s3.onnx --device stm32h743
  OUTPUT "stm32h743 \\(built-in\\): capacity 131072 B"
         "bank dtcm: 131072 B, alignment 4 B, access cost 1, holds activations, workspaces"
         "Banks"
         "dtcm +128.00 KiB +1 +[0-9]+ "
         "flash +2.00 MiB +5 +[0-9]+ .* fits"
         "traffic [0-9]+ \\(accessed bytes x access cost\\), lower bound [0-9]+"
         " dtcm:[0-9]+ "
         " flash:[0-9]+ ")
memledger_cli_test(plan.banks_every_board
  ARGS plan ${BANK_ONNX}/conv_bn_relu.onnx --device esp32s3 --brief
  OUTPUT "psram +8.00 MiB +8 ")
memledger_cli_test(plan.banks_missing_capacity
  ARGS plan ${BANK_ONNX}/conv_bn_relu.onnx --device ${BANK_DEVICES}/banks_no_capacity.toml EXIT_CODE 2
  OUTPUT "banks_no_capacity.toml:7: missing required key 'banks\\[1\\].capacity_bytes' \\(bank 'psram'\\)")
memledger_cli_test(plan.banks_duplicate_name
  ARGS plan ${BANK_ONNX}/conv_bn_relu.onnx --device ${BANK_DEVICES}/banks_duplicate.toml EXIT_CODE 2
  OUTPUT "banks_duplicate.toml:8: key 'banks\\[1\\].name': a second bank named 'sram'")
memledger_cli_test(plan.banks_unknown_kind
  ARGS plan ${BANK_ONNX}/conv_bn_relu.onnx --device ${BANK_DEVICES}/banks_unknown_kind.toml EXIT_CODE 2
  OUTPUT "key 'banks\\[0\\].holds': 'weights' is not one of: activations, workspaces, constants, inputs")
memledger_cli_test(plan.banks_do_not_fit
  ARGS plan ${BANK_ONNX}/conv_bn_relu.onnx --device ${BANK_DEVICES}/banks_tiny.toml --brief EXIT_CODE 3
  OUTPUT "memledger: bank '(tcm|sram)': its [0-9]+ buffers need [0-9]+ B but it has (64|128) B \\([0-9]+ B too many")
memledger_cli_test(plan.banks_refuse_csv
  ARGS plan ${BANK_ONNX}/conv_bn_relu.onnx --device rp2040 --csv ${CMAKE_CURRENT_BINARY_DIR}/banks_refused.csv
  EXIT_CODE 2 OUTPUT "--csv: device 'rp2040' has banks")

# run --arena on a banked plan: the banks laid end to end in one guarded arena, each buffer at
# its bank's base plus its offset; the outputs must be bit-identical to the ordinary run.
memledger_cli_test(run.banks_arena_randwire
  ARGS run ${BANK_ONNX}/randwire_ws_n10_s3.onnx --arena --device stm32h743
  OUTPUT "arena run on 'stm32h743'" "guard violations: 0" "bit-identical")
foreach(model squeezenet1_0 shufflenet_v2_x1_0 mobilenet_v2)
  memledger_cli_test(run.banks_arena_${model} NEEDS ${MEMLEDGER_TEST_CORPUS}/${model}.onnx
    ARGS run ${MEMLEDGER_TEST_CORPUS}/${model}.onnx --arena --device esp32s3 --kernels fast
    OUTPUT "arena run on 'esp32s3'" "guard violations: 0" "bit-identical")
endforeach()
