# Allocation-failure injection (docs/internals/faultsim.md): rknn-diag-faultsim is rknn-diag linked with
# alloc_fail.c and -Wl,--wrap for every allocating function our libraries call, so that
# RD_FAULTSIM_FAIL=N fails the Nth allocation. Only this test build has the counter; rknn-diag has none.
set(RD_FAULTSIM_WRAPPED malloc calloc realloc strdup strndup posix_memalign realpath open_memstream fdopen
  fdopendir opendir getaddrinfo pthread_create gzdopen)
add_executable(rknn-diag-faultsim ${PROJECT_SOURCE_DIR}/analyzer/cli/main.c ${CMAKE_CURRENT_LIST_DIR}/alloc_fail.c)
target_link_libraries(rknn-diag-faultsim PRIVATE rd::analyzer PkgConfig::CJSON PkgConfig::CRYPTO PkgConfig::ZLIB)
foreach(fn ${RD_FAULTSIM_WRAPPED})
  target_link_options(rknn-diag-faultsim PRIVATE "LINKER:--wrap=${fn}")
endforeach()

# One loop per command on the demo model. Each fails the first allocation of every call site plus every
# Sth allocation (S below: the counts are 759 for run, ~5,900 for accuracy, measured on the demo model);
# -DRD_FAULTSIM_FULL=ON fails every allocation (accuracy then takes about 30 minutes per loop).
option(RD_FAULTSIM_FULL "Fail every allocation in the faultsim loops, not a stride" OFF)
function(rd_faultsim_loop name stride)
  if(RD_FAULTSIM_FULL)
    set(stride 1)
  endif()
  add_test(NAME faultsim_${name}
    COMMAND bash ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/faultsim_loop.sh $<TARGET_FILE:rknn-diag-faultsim>
            ${CMAKE_CURRENT_BINARY_DIR}/faultsim_${name} --sites --stride ${stride} -- ${ARGN})
  # a loop is hundreds of runs: on a loaded 2-core machine the accuracy ones take 10 to 20 minutes
  set_tests_properties(faultsim_${name} PROPERTIES LABELS faultsim TIMEOUT 3600)
endfunction()
rd_faultsim_loop(onnx_load 1 inspect @DEMO@/demo.onnx)
rd_faultsim_loop(onnx_load_json 4 inspect --json @DEMO@/demo.onnx)
rd_faultsim_loop(run 3 run @DEMO@/demo.onnx --input @DEMO@/image.npy -o @OUT@ -q)
rd_faultsim_loop(run_fp16_json 10 run @DEMO@/demo.onnx --input @DEMO@/image.npy --precision fp16 --json -o @OUT@)
rd_faultsim_loop(accuracy_int8 40
  accuracy @DEMO@/demo.onnx --dataset @DEMO@/dataset2.txt --input-layout nchw -o @OUT@ -q)
rd_faultsim_loop(accuracy_fp16 40
  accuracy @DEMO@/demo.onnx --inputs @DEMO@/image.npy --input-layout nchw --dtype float16 -o @OUT@ -q)
# The --json printers (a tree missing members must never be printed): compare on two dump folders and on
# two snapshots, inspect on a .rknn and on a build log (the committed fuzz seeds), hybrid suggest.
rd_faultsim_loop(compare_dumps_json 1
  run @DEMO@/demo.onnx --input @DEMO@/image.npy -o @DEMO@/a -q @THEN@
  run @DEMO@/demo.onnx --input @DEMO@/image.npy --precision fp16 -o @DEMO@/b -q @THEN@
  compare @DEMO@/a @DEMO@/b --json)
rd_faultsim_loop(compare_results_json 1
  accuracy @DEMO@/demo.onnx --inputs @DEMO@/image.npy --input-layout nchw -o @DEMO@/r1 -q @THEN@
  accuracy @DEMO@/demo.onnx --inputs @DEMO@/image.npy --input-layout nchw --dtype float16 -o @DEMO@/r2 -q @THEN@
  compare @DEMO@/r1 @DEMO@/r2 --json)
rd_faultsim_loop(inspect_rknn_json 2 inspect --json ${PROJECT_SOURCE_DIR}/tests/fuzz/corpus/rknn/demo_v6.rknn)
rd_faultsim_loop(inspect_build_log_json 1
  inspect --json --build-log ${PROJECT_SOURCE_DIR}/tests/fuzz/corpus/rknn_build_log/build_table_1x.log)
rd_faultsim_loop(hybrid_suggest_json 10
  hybrid suggest @DEMO@/demo.onnx --dataset @DEMO@/dataset2.txt --input-layout nchw --json)
# eval: the records of partial.json, the report built from them, report.json and the --json summary.
rd_faultsim_loop(eval_classify_json 20
  eval @DEMO@/demo.onnx --dataset @DEMO@/dataset2.txt --labels @DEMO@/labels2.txt --input-layout nchw --json -o @OUT@)
# accuracy --shard and the merge of its parts (docs/sharding.md): the shard's partial.json writer, then the
# merge (parts read and checked, the dump sample analysed again, the others' metrics added)
rd_faultsim_loop(accuracy_shard 40
  accuracy @DEMO@/demo.onnx --dataset @DEMO@/dataset2.txt --input-layout nchw --samples 2 --shard 1/2 -o @OUT@ -q)
rd_faultsim_loop(accuracy_merge 40
  accuracy @DEMO@/demo.onnx --dataset @DEMO@/dataset2.txt --input-layout nchw --samples 2 --shard 0/2 -o @DEMO@/p0 -q
  @THEN@
  accuracy @DEMO@/demo.onnx --dataset @DEMO@/dataset2.txt --input-layout nchw --samples 2 --shard 1/2 -o @DEMO@/p1 -q
  @THEN@
  merge @DEMO@/p0 @DEMO@/p1 -o @OUT@)
# accuracy against a board's dumps (docs/runtime.md): the emulated board's application (board-run) writes the
# dumps of the demo model, then the analysis reads them (the runtime_error group, the input and output checks)
rd_faultsim_loop(accuracy_runtime_dumps 40
  quantize @DEMO@/demo.onnx --dataset @DEMO@/dataset2.txt --input-layout nchw -o @DEMO@/demo.quantization.cfg @THEN@
  RKNN_LOG_LEVEL=5 board-run @DEMO@/demo.onnx --input @DEMO@/image.npy --input-layout nchw
  --cfg @DEMO@/demo.quantization.cfg --target rk3566 --dump-dir @DEMO@/dumps @THEN@
  accuracy @DEMO@/demo.onnx -i @DEMO@/image.npy --input-layout nchw --cfg @DEMO@/demo.quantization.cfg --target rk3566
  --runtime-dumps @DEMO@/dumps -o @OUT@ -q)
# hybrid search (its steps printed and kept for search.json, the winning cfg, the accuracy report of it):
# a target the int8 model misses (SQNR 70 dB: 23 sets measured), so that singles, windows and removal run;
# hybrid diagnose --json (the variants re-calibrated and re-run, the evidence); hybrid search --score-cmd with
# the tests' scorer (tests/support/test_scorer.c): the candidates' outputs folders and their index.json, the
# scorer's runs and its numbers in search.json (a target the int8 model meets: two scorer runs).
rd_faultsim_loop(hybrid_search 100
  hybrid search @DEMO@/demo.onnx --dataset @DEMO@/dataset2.txt --input-layout nchw --target-cos 0.99
  --target-sqnr 70 -o @OUT@/h.quantization.cfg)
rd_faultsim_loop(hybrid_diagnose_json 100
  hybrid diagnose @DEMO@/demo.onnx --dataset @DEMO@/dataset2.txt --input-layout nchw --json)
rd_faultsim_loop(hybrid_search_score_cmd 100
  hybrid search @DEMO@/demo.onnx --dataset @DEMO@/dataset2.txt --input-layout nchw
  --score-cmd "$<TARGET_FILE:rd_test_scorer> cos" --target-score 0.99999 -o @OUT@/h.quantization.cfg)
