# target_insns (bench/target_insns.c): runs a Cortex-M4 firmware under
# Unicorn and counts the runtime's instructions per event. Both its users
# include this file, so it is built whichever is configured: the
# benchmarks (bench/target.sh, the instructions-per-event figure) and the
# tests (tests/port/dwt_clock.sh, the DWT clock across its wrap), which
# must not depend on NP_BUILD_BENCH. Defined once, in bench/ of the build
# tree either way (where bench/target.sh looks for it).
include_guard(GLOBAL)
pkg_check_modules(UNICORN REQUIRED IMPORTED_TARGET unicorn)
add_executable(target_insns ${PROJECT_SOURCE_DIR}/bench/target_insns.c)
target_compile_options(target_insns PRIVATE -O2)
target_link_libraries(target_insns PRIVATE PkgConfig::UNICORN PkgConfig::LIBELF)
set_target_properties(target_insns PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bench)
