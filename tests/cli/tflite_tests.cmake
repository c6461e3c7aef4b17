# Every command on .tflite models (issue 36): the reader through the real program, the
# persistent SVDF state in the ledger, the plan written back for TFLite Micro, and bad files.
set(TFL ${PROJECT_SOURCE_DIR}/tests/data/tflite)
memledger_cli_test(tflite.inspect ARGS inspect ${TFL}/keyword_scrambled.tflite
  OUTPUT "SVDF" "FULLY_CONNECTED" "int16")
memledger_cli_test(tflite.plan_persistent_state ARGS plan ${TFL}/keyword_scrambled.tflite --device ${TFL}/tflm.toml
  OUTPUT "persistent +7 " "of which non-persistent head [0-9]+ B, persistent tail 10240 B")
memledger_cli_test(tflite.plan_emit_tflite
  ARGS plan ${TFL}/keyword_scrambled.tflite --device ${TFL}/tflm.toml --brief
       --emit-tflite ${CMAKE_CURRENT_BINARY_DIR}/keyword_planned.tflite
  OUTPUT "OfflineMemoryAllocation\\): [0-9]+ tensors at memledger's offsets" "variables 10240 B")
memledger_cli_test(tflite.plan_mcu_emit_c
  ARGS plan ${TFL}/micro_speech_quantized.tflite --device mcu --brief --emit-c ${CMAKE_CURRENT_BINARY_DIR}/speech.h
  OUTPUT "DEPTHWISE_CONV_2D" "fits")
memledger_cli_test(tflite.fit_mcu ARGS fit ${TFL}/micro_speech_quantized.tflite --device mcu
  --emit-tflite ${CMAKE_CURRENT_BINARY_DIR}/speech_fit.tflite OUTPUT "OfflineMemoryAllocation")
memledger_cli_test(tflite.wrong_identifier ARGS plan ${TFL}/bad_identifier.tflite
  --emit-tflite ${CMAKE_CURRENT_BINARY_DIR}/bad_planned.tflite
  EXIT_CODE 2 OUTPUT "bad_identifier.tflite: file identifier 'XXXX' is not TFLite's 'TFL3'")
memledger_check_file(tflite.wrong_identifier_writes_nothing ${CMAKE_CURRENT_BINARY_DIR}/bad_planned.tflite ABSENT)
memledger_cli_test(tflite.truncated ARGS inspect ${TFL}/truncated.tflite EXIT_CODE 2 OUTPUT "truncated.tflite: .*does not verify")
memledger_cli_test(tflite.input_shape_refused ARGS plan ${TFL}/hello_world_int8.tflite --input-shape x=1x1
  EXIT_CODE 2 OUTPUT "--input-shape: .*hello_world_int8.tflite: input shapes apply to ONNX models")
memledger_cli_test(tflite.emit_tflite_needs_tflite
  ARGS plan ${PROJECT_SOURCE_DIR}/tests/data/onnx/affine_distinct.onnx --emit-tflite ${CMAKE_CURRENT_BINARY_DIR}/x.tflite
  EXIT_CODE 2 OUTPUT "--emit-tflite: .* is not a TFLite model")
