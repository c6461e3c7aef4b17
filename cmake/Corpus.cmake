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
