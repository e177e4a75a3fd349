# Detection on a real model: UltraFace (../shared/models) over the shared photos, against fixtures/shared_photos_faces.json.
rd_add_test(test_eval_shared SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_eval_shared.c ${PROJECT_SOURCE_DIR}/tests/analyzer/cli_capture.c
            LIBS rd::analyzer PkgConfig::CJSON LABELS "e2e;needs-shared")
target_include_directories(test_eval_shared PRIVATE ${PROJECT_SOURCE_DIR}/tests/analyzer)
