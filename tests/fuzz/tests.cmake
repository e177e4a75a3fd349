# Fuzz targets (docs/internals/fuzzing.md). Every tests/fuzz/fuzz_<name>.c defines
# LLVMFuzzerTestOneInput for one outside format and is picked up by this glob:
#  - replay_<name>, always built: the target plus replay_main.c, run by CTest (label fuzz-replay) over
#    tests/fuzz/corpus/<name>/ and deterministic mutations of each seed, under whatever sanitizers the
#    build uses (gcc or clang);
#  - fuzz_<name>, with -DRD_FUZZ=ON and clang: the libFuzzer binary.
# Link list: RD_FUZZ_LIBS_<name> when set, else RD_FUZZ_LIBS_DEFAULT. A target for another library
# adds one line here, e.g. set(RD_FUZZ_LIBS_adb_packet rd::adb_bridge rd::simulator).
set(RD_FUZZ_DIR ${CMAKE_CURRENT_LIST_DIR})
set(RD_FUZZ_LIBS_DEFAULT rd::simulator)
set(RD_FUZZ_LIBS_report_json rd::reports PkgConfig::CJSON)
# adb targets reach the bridge's internals through rd_adb_internal (defined in tests/unit/adb_bridge/tests.cmake)
set(RD_FUZZ_LIBS_adb_packet rd_adb_internal)
set(RD_FUZZ_LIBS_adb_sync rd_adb_internal)
set(RD_FUZZ_LIBS_adb_keys rd_adb_internal)
set(RD_FUZZ_LIBS_board_command rd_adb_internal)
set(RD_FUZZ_LIBS_rknn_txt rd::reports rd::simulator)
set(RD_FUZZ_LIBS_snapshot_names rd::reports rd::simulator)
# analyzer targets reach its internals (dumps.h, edit_formula.h) through rd_analyzer_internal
# (analyzer/CMakeLists.txt)
set(RD_FUZZ_LIBS_dump_name rd_analyzer_internal)
set(RD_FUZZ_LIBS_edit_formula rd_analyzer_internal)
set(RD_FUZZ_LIBS_perf_log rd_analyzer_internal)
set(RD_FUZZ_LIBS_rknn rd::rknn_model rd::simulator)
set(RD_FUZZ_LIBS_rknn_build_log rd::rknn_model rd::simulator)
set(RD_FUZZ_LIBS_tflite rd::frontends rd::simulator)
set(RD_FUZZ_LIBS_darknet rd::frontends rd::simulator)
# the caffe targets read the test net of tests/unit/frontends/caffe_synth.c (rd_test_frontend_synth: tests/unit/frontends/tests.cmake)
set(RD_FUZZ_LIBS_caffe_prototxt rd::frontends rd::simulator rd_test_frontend_synth)
set(RD_FUZZ_LIBS_caffe_model rd::frontends rd::simulator rd_test_frontend_synth)
set(RD_FUZZ_LIBS_tf rd::frontends rd::simulator)
set(RD_FUZZ_LIBS_coco_annot rd_analyzer_internal)
set(RD_FUZZ_LIBS_yolo_labels rd_analyzer_internal)
set(RD_FUZZ_LIBS_eval_partial rd_analyzer_internal PkgConfig::CJSON)
set(RD_FUZZ_LIBS_accuracy_partial rd_analyzer_internal PkgConfig::CJSON)
set(RD_FUZZ_REPLAY_MUTATIONS 300 CACHE STRING "Mutations of each corpus file that fuzz replays run")

if(RD_FUZZ AND NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "RD_FUZZ=ON needs clang: CC=clang cmake -B build-fuzz -DRD_FUZZ=ON")
endif()

file(GLOB RD_FUZZ_SOURCES CONFIGURE_DEPENDS ${RD_FUZZ_DIR}/fuzz_*.c)
foreach(src ${RD_FUZZ_SOURCES})
  get_filename_component(stem ${src} NAME_WE)
  string(REGEX REPLACE "^fuzz_" "" fuzz_name ${stem})
  if(DEFINED RD_FUZZ_LIBS_${fuzz_name})
    set(fuzz_libs ${RD_FUZZ_LIBS_${fuzz_name}})
  else()
    set(fuzz_libs ${RD_FUZZ_LIBS_DEFAULT})
  endif()

  add_executable(replay_${fuzz_name} ${src} ${RD_FUZZ_DIR}/replay_main.c)
  target_link_libraries(replay_${fuzz_name} PRIVATE ${fuzz_libs})
  # the oracles may use the tests' header-only checks (tests/support/tensor_check.h)
  target_include_directories(replay_${fuzz_name} PRIVATE ${PROJECT_SOURCE_DIR}/tests/support)
  # a missing corpus folder is fine: replay_main then runs mutations of the empty input
  add_test(NAME replay_${fuzz_name}
    COMMAND replay_${fuzz_name} -n ${RD_FUZZ_REPLAY_MUTATIONS} ${RD_FUZZ_DIR}/corpus/${fuzz_name})
  set_tests_properties(replay_${fuzz_name} PROPERTIES LABELS fuzz-replay)

  if(RD_FUZZ)
    add_executable(fuzz_${fuzz_name} ${src})
    target_link_libraries(fuzz_${fuzz_name} PRIVATE ${fuzz_libs})
    target_include_directories(fuzz_${fuzz_name} PRIVATE ${PROJECT_SOURCE_DIR}/tests/support)
    target_compile_options(fuzz_${fuzz_name} PRIVATE -fsanitize=fuzzer)
    target_link_options(fuzz_${fuzz_name} PRIVATE -fsanitize=fuzzer)
  endif()
endforeach()
