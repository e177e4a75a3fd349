# report.html in headless Chromium (Debian's chromium; tools/setup.sh installs it): no console error,
# one row per layer, sorting and filtering work (the page's #selftest, read back with --dump-dom).
# Skips (77) without chromium unless CI is set. RD_CHROMIUM overrides the browser path;
# RD_BROWSER_SCREENSHOT=path also saves a 1400x1000 screenshot of the realistic report there.
rd_add_test(test_browser
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_browser.c ${PROJECT_SOURCE_DIR}/tests/support/sample_result.c
  LIBS rd::reports LABELS browser)
set_tests_properties(test_browser PROPERTIES TIMEOUT 300)
