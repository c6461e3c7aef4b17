# Model corpus: torchvision classification models exported to ONNX with seeded random
# weights by scripts/corpus/export_torchvision.py (DESIGN.md §7). Generated into the build
# tree, never committed. `cmake --build <dir> --target corpus` makes the default set;
# the script caches by its own hash, the seed and the library versions, so a second run
# returns at once. Not part of ALL: it needs Debian's python3-torch and takes ~15 s.
#
# Include from the root CMakeLists.txt: include(cmake/Corpus.cmake)

set(MEMLEDGER_CORPUS_DIR "${PROJECT_BINARY_DIR}/corpus"
    CACHE PATH "Folder the corpus target writes ONNX models and manifest.json into")
set(MEMLEDGER_CORPUS_PYTHON "/usr/bin/python3"
    CACHE FILEPATH "Python with torch, torchvision and onnx (Debian's python3-torch)")
set(MEMLEDGER_CORPUS_MODELS ""
    CACHE STRING "Comma-separated torchvision models for the corpus target (empty: the script's default set)")
set(MEMLEDGER_CORPUS_SEED "0" CACHE STRING "Seed for the corpus weights and inputs")

set(_memledger_corpus_args --out "${MEMLEDGER_CORPUS_DIR}" --seed "${MEMLEDGER_CORPUS_SEED}")
if(MEMLEDGER_CORPUS_MODELS)
  list(APPEND _memledger_corpus_args --models "${MEMLEDGER_CORPUS_MODELS}")
endif()

# Always runs; the script itself decides what is out of date from manifest.json.
add_custom_target(corpus
  COMMAND "${MEMLEDGER_CORPUS_PYTHON}" "${PROJECT_SOURCE_DIR}/scripts/corpus/export_torchvision.py"
          ${_memledger_corpus_args}
  WORKING_DIRECTORY "${PROJECT_BINARY_DIR}"
  COMMENT "Exporting the torchvision ONNX corpus into ${MEMLEDGER_CORPUS_DIR}"
  USES_TERMINAL
  VERBATIM)

add_custom_target(corpus-check
  COMMAND "${MEMLEDGER_CORPUS_PYTHON}" "${PROJECT_SOURCE_DIR}/scripts/corpus/check_bn_variants.py"
          "${MEMLEDGER_CORPUS_DIR}"
  DEPENDS corpus
  COMMENT "Checking the ONNX corpus in ${MEMLEDGER_CORPUS_DIR}"
  USES_TERMINAL
  VERBATIM)
unset(_memledger_corpus_args)

# The model sweep's CI subset (scripts/corpus/sweep.py): a vision transformer, swin,
# maxvit, densenet, inception, a segmenter and mobilenet_v3_small (fit's second patched
# stage is tested on it), folded variant only, exported into their own
# folder; `cmake --build <dir> --target sweep` runs inspect, plan, run against
# onnxruntime and run --arena on each. The whole sweep (every torchvision model) is the
# same script on a folder made with `export_torchvision.py --all --variants folded`.
set(MEMLEDGER_SWEEP_DIR "${PROJECT_BINARY_DIR}/sweep" CACHE PATH "Folder the corpus-sweep target exports into")
set(MEMLEDGER_SWEEP_MODELS "vit_b_16,swin_t,maxvit_t,densenet121,inception_v3,lraspp_mobilenet_v3_large,mobilenet_v3_small"
    CACHE STRING "Comma-separated models of the CI sweep")
add_custom_target(corpus-sweep
  COMMAND "${MEMLEDGER_CORPUS_PYTHON}" "${PROJECT_SOURCE_DIR}/scripts/corpus/export_torchvision.py"
          --out "${MEMLEDGER_SWEEP_DIR}" --seed "${MEMLEDGER_CORPUS_SEED}" --variants folded
          --models "${MEMLEDGER_SWEEP_MODELS}"
  WORKING_DIRECTORY "${PROJECT_BINARY_DIR}"
  COMMENT "Exporting the sweep's models into ${MEMLEDGER_SWEEP_DIR}"
  USES_TERMINAL
  VERBATIM)
add_custom_target(sweep
  COMMAND "${MEMLEDGER_CORPUS_PYTHON}" "${PROJECT_SOURCE_DIR}/scripts/corpus/sweep.py"
          --corpus "${MEMLEDGER_SWEEP_DIR}" --memledger "$<TARGET_FILE:memledger_cli>"
          --json "${PROJECT_BINARY_DIR}/sweep.json"
  DEPENDS corpus-sweep memledger_cli
  WORKING_DIRECTORY "${PROJECT_BINARY_DIR}"
  COMMENT "Sweeping ${MEMLEDGER_SWEEP_DIR} through memledger and onnxruntime"
  USES_TERMINAL
  VERBATIM)

# The int8 corpus (scripts/corpus/quantize_qdq.py, issue 35): the float models above quantized
# to int8 QDQ ONNX in onnxruntime's layout, calibrated in onnxruntime-node (tests/ort; `npm ci`
# there first), with <name>.int8.onnx, <name>.input.npy, <name>.int8.ort.npy and manifest.json
# (scales, float-against-int8 accuracy, cache key) in MEMLEDGER_CORPUS_INT8_DIR. The float models
# are exported into float<side>/ beside it. Cached like the float corpus. The test command's
# subset takes about 3 minutes cold on the 2-core machine; MEMLEDGER_CORPUS_INT8_ALL adds
# mobilenet_v2 at 160², mnasnet1_0, mobilenet_v3_large, shufflenet_v2_x1_0 and googlenet.
set(MEMLEDGER_CORPUS_INT8_DIR "${PROJECT_BINARY_DIR}/corpus-int8"
    CACHE PATH "Folder the corpus-int8 target writes the int8 QDQ models and manifest.json into")
set(MEMLEDGER_CORPUS_INT8_MODELS "" CACHE STRING
    "Comma-separated NAME or NAME@SIDE for the corpus-int8 target (empty: the script's CI subset)")
option(MEMLEDGER_CORPUS_INT8_ALL "corpus-int8 makes every model of the int8 corpus, not the CI subset" OFF)
set(_memledger_int8_args --out "${MEMLEDGER_CORPUS_INT8_DIR}" --float-dir "${MEMLEDGER_CORPUS_INT8_DIR}/float"
    --seed "${MEMLEDGER_CORPUS_SEED}" --ort-dir "${PROJECT_SOURCE_DIR}/tests/ort")
if(MEMLEDGER_CORPUS_INT8_ALL)
  list(APPEND _memledger_int8_args --all)
elseif(MEMLEDGER_CORPUS_INT8_MODELS)
  list(APPEND _memledger_int8_args --models "${MEMLEDGER_CORPUS_INT8_MODELS}")
endif()
add_custom_target(corpus-int8
  COMMAND "${MEMLEDGER_CORPUS_PYTHON}" "${PROJECT_SOURCE_DIR}/scripts/corpus/quantize_qdq.py" ${_memledger_int8_args}
  WORKING_DIRECTORY "${PROJECT_BINARY_DIR}"
  COMMENT "Quantizing the int8 QDQ corpus into ${MEMLEDGER_CORPUS_INT8_DIR}"
  USES_TERMINAL
  VERBATIM)
add_custom_target(corpus-int8-check
  COMMAND "${MEMLEDGER_CORPUS_PYTHON}" "${PROJECT_SOURCE_DIR}/scripts/corpus/check_int8.py"
          "${MEMLEDGER_CORPUS_INT8_DIR}"
  DEPENDS corpus-int8
  COMMENT "Checking the int8 corpus in ${MEMLEDGER_CORPUS_INT8_DIR}"
  USES_TERMINAL
  VERBATIM)
unset(_memledger_int8_args)
