# adb_bridge tests: CUnit (packets, auth, USB with a mock of libusb, the fake board driven by our client)
# and the end-to-end script against Debian's real adb client and server.
file(GLOB UNIT_ADB CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/test_*.c)
rd_add_test(test_adb SOURCES ${UNIT_ADB} ${CMAKE_CURRENT_LIST_DIR}/adb_test_util.c
            LIBS rd::adb_bridge PkgConfig::USB PkgConfig::CRYPTO LABELS unit)
target_include_directories(test_adb PRIVATE ${PROJECT_SOURCE_DIR}/adb_bridge/src ${CMAKE_CURRENT_LIST_DIR})
set_tests_properties(test_adb PROPERTIES TIMEOUT 300)

add_test(NAME e2e_adb_real COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/e2e_real_adb.sh $<TARGET_FILE:rknn-diag>)
set_tests_properties(e2e_adb_real PROPERTIES LABELS e2e SKIP_RETURN_CODE 77 TIMEOUT 900)

# Fuzz targets tests/fuzz/fuzz_adb_packet.c and fuzz_adb_sync.c (built by tests/fuzz/tests.cmake, which names
# this target in its link lists) reach the library's internals through this interface target.
add_library(rd_adb_internal INTERFACE)
target_include_directories(rd_adb_internal INTERFACE ${PROJECT_SOURCE_DIR}/adb_bridge/src)
target_link_libraries(rd_adb_internal INTERFACE rd::adb_bridge PkgConfig::USB PkgConfig::CRYPTO)

# The README demo from clones under /tmp, /srv and a folder with a space (the board's path mapping).
add_test(NAME e2e_demo_paths COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/e2e_demo_paths.sh ${PROJECT_SOURCE_DIR}
         $<TARGET_FILE:rknn-diag>)
set_tests_properties(e2e_demo_paths PROPERTIES LABELS e2e TIMEOUT 900)
