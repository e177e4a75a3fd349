# Caffe and TensorFlow models for tests and their fuzz targets: .caffemodel files written with the protobuf-c
# code generated from frontends/proto/caffe.proto, GraphDefs with tf_synth.c's own protobuf encoder.
add_library(rd_test_frontend_synth STATIC ${CMAKE_CURRENT_LIST_DIR}/caffe_synth.c ${CMAKE_CURRENT_LIST_DIR}/tf_synth.c)
target_include_directories(rd_test_frontend_synth PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(rd_test_frontend_synth PUBLIC rd_frontends_caffe_pb PkgConfig::PROTOBUF_C)
add_dependencies(rd_test_frontend_synth rd_frontends)

# The model frontends (TFLite, ...): unit tests on models the tests write (tflite_synth.c), and the real
# TFLite models of ../shared/tflite read in place (skipped when ../shared is absent, failed under CI).
rd_add_test(test_frontends
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_tflite.c ${CMAKE_CURRENT_LIST_DIR}/tflite_synth.c
          ${CMAKE_CURRENT_LIST_DIR}/test_darknet.c ${CMAKE_CURRENT_LIST_DIR}/darknet_synth.c
          ${CMAKE_CURRENT_LIST_DIR}/test_caffe.c ${CMAKE_CURRENT_LIST_DIR}/test_tf.c ${CMAKE_CURRENT_LIST_DIR}/fe_check.c
          ${CMAKE_CURRENT_LIST_DIR}/test_frontends_cli.c ${PROJECT_SOURCE_DIR}/tests/support/cli_capture.c
  LIBS rd::frontends rd::flatbuf rd::analyzer rd::simulator rd_test_frontend_synth
  LABELS unit)
rd_add_test(test_frontends_shared
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_tflite_shared.c
  LIBS rd::frontends rd::simulator
  LABELS unit needs-shared)
# Darknet itself as the oracle: Debian's darknet package ships libdarknet.so and darknet.h (tools/setup.sh
# installs it). Without it the test reports SKIP, and fails under CI.
find_library(RD_DARKNET_LIB darknet PATHS /usr/lib/darknet NO_DEFAULT_PATH)
find_path(RD_DARKNET_INCLUDE darknet.h PATHS /usr/lib/darknet/include NO_DEFAULT_PATH)
if(RD_DARKNET_LIB AND RD_DARKNET_INCLUDE)
  rd_add_test(test_darknet_oracle
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_darknet_oracle.c ${CMAKE_CURRENT_LIST_DIR}/darknet_synth.c
    LIBS rd::frontends rd::simulator ${RD_DARKNET_LIB}
    LABELS unit)
  target_include_directories(test_darknet_oracle PRIVATE ${RD_DARKNET_INCLUDE})
  set_target_properties(test_darknet_oracle PROPERTIES BUILD_RPATH /usr/lib/darknet)
else()
  add_test(NAME test_darknet_oracle COMMAND sh -c
    "echo 'skip: needs Debian darknet package (libdarknet.so): tools/setup.sh installs it'; [ -z \"$CI\" ] && exit 77; exit 1")
  set_tests_properties(test_darknet_oracle PROPERTIES SKIP_RETURN_CODE 77 LABELS unit)
endif()
# PyTorch itself as the oracle: Debian's python3-torch for /usr/bin/python3 (tools/setup.sh installs it) writes
# TorchScript models and their outputs; without it the test reports SKIP, and fails under CI.
rd_add_test(test_pytorch_oracle
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_pytorch_oracle.c ${PROJECT_SOURCE_DIR}/tests/support/cli_capture.c
  LIBS rd::frontends rd::analyzer rd::simulator
  LABELS unit)
