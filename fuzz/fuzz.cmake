# libFuzzer targets (scripts/fuzz.sh builds build-fuzz with clang and -DEAGLE_FUZZ=ON,
# which instruments every library with ASan + UBSan + coverage): one per parser of
# outside input. Seed corpora: fuzz/corpus/<target>/.
# clang ignores the `#pragma GCC target` of the SIMD kernel files: in this build (on the
# machine that runs it, never shipped) they get the ISA flags on the command line.
set_source_files_properties(${CMAKE_SOURCE_DIR}/src/eagle/index/vector/simd_avx2.cpp PROPERTIES
  COMPILE_OPTIONS "-mavx2;-mfma;-mf16c")
set_source_files_properties(${CMAKE_SOURCE_DIR}/src/eagle/index/vector/simd_avx512.cpp PROPERTIES
  COMPILE_OPTIONS "-mavx512f;-mavx512bw;-mavx512vl;-mavx512dq;-mavx2;-mfma;-mf16c")

set(EAGLE_FUZZ_TARGETS
  fuzz_corpus_record:eagle_ingest
  fuzz_filter:eagle_store
  fuzz_analyzer:eagle_text
  fuzz_wal:eagle_store
  fuzz_log_record:eagle_store
  fuzz_segment:eagle_store
  fuzz_spl:eagle_biomed_ingest
  fuzz_config:eagle_app_config
  fuzz_safetensors:eagle_encode
  fuzz_compounds:eagle_biomed_ingest+eagle_chem
  fuzz_vocab:eagle_biomed_vocab
  fuzz_mcp:eagle_mcp
  fuzz_http:eagle_server
  fuzz_multipart:eagle_server
  fuzz_glove:eagle_encode
  fuzz_remote:eagle_encode
  fuzz_jats:eagle_ingest
  fuzz_pubmed:eagle_ingest
  fuzz_html:eagle_ingest
  fuzz_pdf:eagle_ingest
  fuzz_markdown:eagle_ingest
  fuzz_image:eagle_ingest
  fuzz_json_input:eagle_core)
foreach(entry ${EAGLE_FUZZ_TARGETS})
  string(REPLACE ":" ";" parts ${entry})
  list(GET parts 0 target)
  list(GET parts 1 libs)
  string(REPLACE "+" ";" libs ${libs})
  add_executable(${target} ${CMAKE_SOURCE_DIR}/fuzz/${target}.cpp)
  target_link_libraries(${target} PRIVATE ${libs})
  target_link_options(${target} PRIVATE -fsanitize=fuzzer)
  list(APPEND EAGLE_FUZZ_TARGET_NAMES ${target})
endforeach()
add_custom_target(fuzzers DEPENDS ${EAGLE_FUZZ_TARGET_NAMES})
