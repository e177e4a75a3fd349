# The hostile-input corpus (docs/security.md): every kind of input, as a link, a FIFO, unreadable, huge,
# truncated, empty and a folder, each with its expected exit code and message (tests/e2e/hostile/expected.tsv).
# The variants are made at test time in a temporary folder from small seeds (tests/e2e/hostile/seeds/, the fuzz
# corpora and files the binary writes).
add_test(NAME hostile_inputs
  COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/hostile.sh $<TARGET_FILE:rknn-diag> ${PROJECT_SOURCE_DIR})
set_tests_properties(hostile_inputs PROPERTIES LABELS e2e TIMEOUT 900)
