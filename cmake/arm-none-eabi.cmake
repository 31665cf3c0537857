# arm-none-eabi.cmake - CMake toolchain file for Cortex-M boards with GNU
# Arm Embedded GCC: builds the runtime alone (NP_PORT=cortex_m) for the CPU
# of the board NP_BOARD, and installs the board's startup.c and link.ld.
#   cmake -S . -B build-m3 -DCMAKE_TOOLCHAIN_FILE=cmake/arm-none-eabi.cmake -DNP_BOARD=mps2-an385
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc)
set(CMAKE_AR arm-none-eabi-ar CACHE FILEPATH "")
set(CMAKE_RANLIB arm-none-eabi-ranlib CACHE FILEPATH "")
# No start-up code or linker script of ours here: test the compiler by
# building a library, not a program.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
# Programs and headers of the host; libraries and headers of the target.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)

# The board: its CPU (the flags every object and the user's program share)
# and, in share/nanoprof/boards/<board>/, its start-up and link script.
set(NP_BOARD "" CACHE STRING "The board: mps2-an385 (Cortex-M3), mps2-an386 (Cortex-M4), microbit (Cortex-M0)")
set_property(CACHE NP_BOARD PROPERTY STRINGS mps2-an385 mps2-an386 microbit)
# try_compile projects see the board too, so their flags match.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES NP_BOARD)
if(NP_BOARD STREQUAL "mps2-an385")
  set(NP_BOARD_CPU cortex-m3)
elseif(NP_BOARD STREQUAL "mps2-an386")
  set(NP_BOARD_CPU cortex-m4)
elseif(NP_BOARD STREQUAL "microbit")
  set(NP_BOARD_CPU cortex-m0)
else()
  message(FATAL_ERROR "NP_BOARD='${NP_BOARD}': choose mps2-an385, mps2-an386 or microbit")
endif()
set(CMAKE_C_FLAGS_INIT "-mcpu=${NP_BOARD_CPU} -mthumb")
set(CMAKE_ASM_FLAGS_INIT "-mcpu=${NP_BOARD_CPU} -mthumb")
set(NP_PORT cortex_m CACHE STRING "The runtime's port: a folder of src/port (posix, cortex_m)")
