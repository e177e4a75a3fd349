# rd_add_test(NAME SOURCES ... LIBS ... LABELS ... [ENV ...])
# Builds one CUnit binary with the shared runner and registers it with CTest.
function(rd_add_test name)
  cmake_parse_arguments(T "" "" "SOURCES;LIBS;LABELS;ENV;ARGS" ${ARGN})
  add_executable(${name} ${T_SOURCES} ${PROJECT_SOURCE_DIR}/tests/support/cunit_main.c)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests/support)
  target_link_libraries(${name} PRIVATE PkgConfig::CUNIT ${T_LIBS})
  target_compile_definitions(${name} PRIVATE
    RD_SOURCE_DIR="${PROJECT_SOURCE_DIR}" RD_BINARY_DIR="${PROJECT_BINARY_DIR}")
  add_test(NAME ${name} COMMAND ${name} ${T_ARGS})
  if(T_LABELS)
    set_tests_properties(${name} PROPERTIES LABELS "${T_LABELS}")
  endif()
  # A test reports SKIP by exiting with 77.
  set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE 77)
  if(T_ENV)
    set_tests_properties(${name} PROPERTIES ENVIRONMENT "${T_ENV}")
  endif()
endfunction()
