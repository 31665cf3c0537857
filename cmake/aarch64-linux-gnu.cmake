# aarch64-linux-gnu.cmake - CMake toolchain file for AArch64 Linux with
# Debian's cross compiler: builds the runtime's libraries alone
# (NP_RUNTIME_ONLY), to be linked into AArch64 programs; the host's
# nanoprof reads what they record.
#   cmake -S . -B build-a64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
# The runtime's libraries for this CPU (libelf, libzstd, libunwind) come
# from Debian's arm64 packages, unpacked in NP_SYSROOT by
# `scripts/deps.sh cross` (the host's dpkg keeps its one architecture).
# On an AArch64 machine, build natively instead: no toolchain file.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_AR aarch64-linux-gnu-ar CACHE FILEPATH "")
set(CMAKE_RANLIB aarch64-linux-gnu-ranlib CACHE FILEPATH "")
set(NP_SYSROOT "/opt/nanoprof/sysroot-arm64" CACHE PATH "Debian's arm64 libelf, libzstd and libunwind, unpacked")
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES NP_SYSROOT)
set(ENV{PKG_CONFIG_LIBDIR} "${NP_SYSROOT}/usr/lib/aarch64-linux-gnu/pkgconfig:${NP_SYSROOT}/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_SYSROOT_DIR} "${NP_SYSROOT}")
# Their headers after the compiler's own, as a native build has them:
# libunwind's unwind.h must not stand in front of GCC's.
set(ENV{PKG_CONFIG_SYSTEM_INCLUDE_PATH} "${NP_SYSROOT}/usr/include:${NP_SYSROOT}/usr/include/aarch64-linux-gnu")
set(CMAKE_C_FLAGS_INIT "-idirafter ${NP_SYSROOT}/usr/include -idirafter ${NP_SYSROOT}/usr/include/aarch64-linux-gnu")
# the libraries those need in turn (zlib, liblzma), when linking a program
set(CMAKE_EXE_LINKER_FLAGS_INIT "-Wl,-rpath-link,${NP_SYSROOT}/lib/aarch64-linux-gnu")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-Wl,-rpath-link,${NP_SYSROOT}/lib/aarch64-linux-gnu")
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /usr/aarch64-linux-gnu)
