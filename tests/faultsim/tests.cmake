# Allocation-failure injection (docs/internals/faultsim.md): rknn-diag-faultsim is rknn-diag linked with
# alloc_fail.c and -Wl,--wrap for every allocating function our libraries call, so that
# RD_FAULTSIM_FAIL=N fails the Nth allocation. Only this test build has the counter; rknn-diag has none.
set(RD_FAULTSIM_WRAPPED malloc calloc realloc strdup strndup posix_memalign realpath open_memstream fdopen
  fdopendir opendir getaddrinfo pthread_create gzdopen)
add_executable(rknn-diag-faultsim ${PROJECT_SOURCE_DIR}/analyzer/src/main.c ${CMAKE_CURRENT_LIST_DIR}/alloc_fail.c)
target_link_libraries(rknn-diag-faultsim PRIVATE rd::analyzer PkgConfig::CJSON PkgConfig::CRYPTO PkgConfig::ZLIB)
foreach(fn ${RD_FAULTSIM_WRAPPED})
  target_link_options(rknn-diag-faultsim PRIVATE "LINKER:--wrap=${fn}")
endforeach()
