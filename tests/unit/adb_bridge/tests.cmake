# adb_bridge tests: CUnit (packets, auth, USB with a mock of libusb, the fake board driven by our client).
# The end-to-end scripts against Debian's real adb and the README demo from other folders are in tests/e2e.
#
# This suite and the fuzz targets tests/fuzz/fuzz_adb_*.c and fuzz_board_command.c (tests/fuzz/tests.cmake
# names this target in its link lists) reach the library's internals through this interface target.
add_library(rd_adb_internal INTERFACE)
target_include_directories(rd_adb_internal INTERFACE ${PROJECT_SOURCE_DIR}/adb_bridge/src)
target_link_libraries(rd_adb_internal INTERFACE rd::adb_bridge PkgConfig::USB PkgConfig::CRYPTO)

file(GLOB UNIT_ADB CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/test_*.c)
rd_add_test(test_adb SOURCES ${UNIT_ADB} ${CMAKE_CURRENT_LIST_DIR}/adb_test_util.c
            LIBS rd_adb_internal LABELS unit)
target_include_directories(test_adb PRIVATE ${CMAKE_CURRENT_LIST_DIR})
set_tests_properties(test_adb PROPERTIES TIMEOUT 300)
