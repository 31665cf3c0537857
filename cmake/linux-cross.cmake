# linux-cross.cmake - what the toolchain files for another Linux CPU share
# (aarch64-linux-gnu.cmake, arm-linux-gnueabihf.cmake, which set
# NP_CROSS_TRIPLET, NP_CROSS_DEB_ARCH, NP_CROSS_QEMU and
# CMAKE_SYSTEM_PROCESSOR first): Debian's cross compiler builds the
# runtime's libraries alone (NP_RUNTIME_ONLY), to be linked into that
# CPU's programs; the host's nanoprof reads what they record.
# The runtime's libraries for that CPU (libelf, libzstd, libunwind) come
# from Debian's packages of its architecture, unpacked in NP_SYSROOT by
# scripts/deps.sh (the host's dpkg keeps its one architecture).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_C_COMPILER ${NP_CROSS_TRIPLET}-gcc)
set(CMAKE_AR ${NP_CROSS_TRIPLET}-ar CACHE FILEPATH "")
set(CMAKE_RANLIB ${NP_CROSS_TRIPLET}-ranlib CACHE FILEPATH "")
set(NP_SYSROOT "/opt/nanoprof/sysroot-${NP_CROSS_DEB_ARCH}" CACHE PATH
    "Debian's ${NP_CROSS_DEB_ARCH} libelf, libzstd and libunwind, unpacked")
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES NP_SYSROOT)
set(ENV{PKG_CONFIG_LIBDIR} "${NP_SYSROOT}/usr/lib/${NP_CROSS_TRIPLET}/pkgconfig:${NP_SYSROOT}/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_SYSROOT_DIR} "${NP_SYSROOT}")
# Their headers after the compiler's own, as a native build has them:
# libunwind's unwind.h must not stand in front of GCC's.
set(ENV{PKG_CONFIG_SYSTEM_INCLUDE_PATH} "${NP_SYSROOT}/usr/include:${NP_SYSROOT}/usr/include/${NP_CROSS_TRIPLET}")
set(CMAKE_C_FLAGS_INIT "-idirafter ${NP_SYSROOT}/usr/include -idirafter ${NP_SYSROOT}/usr/include/${NP_CROSS_TRIPLET}")
# the libraries those need in turn (zlib, liblzma), when linking
set(CMAKE_EXE_LINKER_FLAGS_INIT "-Wl,-rpath-link,${NP_SYSROOT}/lib/${NP_CROSS_TRIPLET}")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-Wl,-rpath-link,${NP_SYSROOT}/lib/${NP_CROSS_TRIPLET}")
set(CMAKE_CROSSCOMPILING_EMULATOR ${NP_CROSS_QEMU} -L /usr/${NP_CROSS_TRIPLET})
