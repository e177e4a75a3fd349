# Opset 18..21 conformance: fixtures/opset18_21/ (written by gen_opset_fixtures, expected outputs from ONNX
# Runtime; regenerate with tools/gen-opset-fixtures.sh) run by the conformance driver.
# The generator is built with everything else so that it keeps compiling, but CI never runs it.
add_executable(gen_opset_fixtures ${CMAKE_CURRENT_LIST_DIR}/gen_opset_fixtures.c)
target_link_libraries(gen_opset_fixtures PRIVATE rd::simulator)
add_test(NAME conformance_opset18_21 COMMAND rd_conformance -q --strict --dir ${PROJECT_SOURCE_DIR}/fixtures/opset18_21)
set_tests_properties(conformance_opset18_21 PROPERTIES LABELS conformance)
