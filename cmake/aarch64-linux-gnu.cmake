# aarch64-linux-gnu.cmake - CMake toolchain file for AArch64 Linux with
# Debian's cross compiler: the runtime's libraries alone (linux-cross.cmake).
#   cmake -S . -B build-a64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
# On an AArch64 machine, build natively instead: no toolchain file.
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(NP_CROSS_TRIPLET aarch64-linux-gnu)
set(NP_CROSS_DEB_ARCH arm64)
set(NP_CROSS_QEMU qemu-aarch64)
include(${CMAKE_CURRENT_LIST_DIR}/linux-cross.cmake)
