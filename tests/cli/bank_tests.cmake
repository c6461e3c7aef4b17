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

# fit across banks (issue 37, item 3): every candidate planned across the banks, extra MACs
# and slow-bank traffic weighed in the device's cycles. int8 resnet18 fits the STM32H743 (its
# 784 KiB first activation is larger than any bank) by a patched first stage that spills
# the rest to the AXI SRAM; the fit's very plan runs bit-identically, its banks end to end
# with guard bytes between them.
set(INT8_RESNET ${MEMLEDGER_CORPUS_INT8_DIR}/resnet18.int8.onnx)
memledger_cli_test(fit.banks_resnet18_int8_stm32h743 NEEDS ${INT8_RESNET}
  ARGS fit ${INT8_RESNET} --device stm32h743
  OUTPUT "slow traffic +cycles"
         "fits across the banks after patches \\([0-9]+x[0-9]+ up to '[^']+'\\): dtcm [0-9.]+ KiB of 128.00 KiB, axi_sram"
         "slow-bank traffic [0-9.]+ MiB \\([0-9.]+ M cycles\\), [0-9.]+ M cycles in all")
memledger_cli_test(run.banks_arena_fit_resnet18_int8 NEEDS ${INT8_RESNET}
  ARGS run ${INT8_RESNET} --arena --fit --device stm32h743 --kernels reference
  OUTPUT "fit plan on 'stm32h743': fits across the banks"
         "arena: the fit's writable banks as planned \\(dtcm [0-9]+ B, axi_sram [0-9]+ B\\), end to end with 64 guard bytes between them: [0-9]+ B = the [0-9]+ B they take"
         "guard violations: 0" "outputs: bit-identical to the ordinary run \\(1 of 1\\)")
# --prefer spill: the slower banks before any extra MAC (mobilenet_v2 fits the ESP32-S3 by its
# PSRAM as it is); patches: none of its bytes in the PSRAM.
set(INT8_MOBILENET ${MEMLEDGER_CORPUS_INT8_DIR}/mobilenet_v2.int8.onnx)
memledger_cli_test(fit.banks_prefer_spill NEEDS ${INT8_MOBILENET}
  ARGS fit ${INT8_MOBILENET} --device esp32s3 --prefer spill
  OUTPUT "fits across the banks after (layer by layer|memory-aware order|in-place rules): sram [0-9.]+ KiB of 320.00 KiB, psram"
         "extra MACs 0, slow-bank traffic [1-9]")
memledger_cli_test(fit.banks_prefer_patches NEEDS ${INT8_MOBILENET}
  ARGS fit ${INT8_MOBILENET} --device esp32s3 --prefer patches
  OUTPUT "fits across the banks after patches" "slow-bank traffic 0 B \\(0 cycles\\)"
  NOT_OUTPUT "psram [0-9]")
memledger_cli_test(fit.prefer_unknown
  ARGS fit ${BANK_ONNX}/conv_bn_relu.onnx --device stm32h743 --prefer speed EXIT_CODE 2
  OUTPUT "--prefer speed: expected cheapest, patches or spill")
memledger_cli_test(fit.prefer_needs_banks
  ARGS fit ${BANK_ONNX}/conv_bn_relu.onnx --device mcu --prefer spill EXIT_CODE 2
  OUTPUT "--prefer spill: device 'mcu' is one arena")
memledger_cli_test(fit.capacity_with_banks_refused
  ARGS fit ${BANK_ONNX}/conv_bn_relu.onnx --device stm32h743 --capacity 1000 EXIT_CODE 2
  OUTPUT "--capacity: device 'stm32h743' has banks")
# The HTML report of a banked plan: a lane per bank and the table of banks.
memledger_cli_test(plan.banks_html
  ARGS plan ${BANK_ONNX}/randwire_ws_n10_s3.onnx --device stm32h743 --brief --html ${CMAKE_CURRENT_BINARY_DIR}/banks.html
  OUTPUT "dtcm +128.00 KiB")
