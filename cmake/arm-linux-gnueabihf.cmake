# arm-linux-gnueabihf.cmake - CMake toolchain file for 32-bit ARM Linux
# (hard float, Debian's armhf) with Debian's cross compiler: the runtime's
# libraries alone (linux-cross.cmake).
#   cmake -S . -B build-arm -DCMAKE_TOOLCHAIN_FILE=cmake/arm-linux-gnueabihf.cmake
set(CMAKE_SYSTEM_PROCESSOR arm)
set(NP_CROSS_TRIPLET arm-linux-gnueabihf)
set(NP_CROSS_DEB_ARCH armhf)
set(NP_CROSS_QEMU qemu-arm)
include(${CMAKE_CURRENT_LIST_DIR}/linux-cross.cmake)
