# ntprof_bpf_skeleton(NAME SOURCE) turns bpf/NAME.bpf.c into NAME.bpf.o and NAME.skel.h and exposes
# them as the interface library ntprof_bpf_NAME, which a binary links to include "NAME.skel.h".
#
# vmlinux.h is generated once per build from the build machine's BTF (/sys/kernel/btf/vmlinux, or
# NTPROF_BTF). Programs use CO-RE, so the types only have to exist, not to match the target kernel.
#
# Skeletons are made in several directories (bpf/, tests/) but vmlinux.h is the output of a custom
# command in this file's directory, and the Makefile generators only know how to build a custom
# command's output inside its own directory: naming vmlinux.h in another directory's DEPENDS fails
# with "No rule to make target". So every skeleton target depends on the one target that makes it
# (ntprof_vmlinux_h), and clang's depfile tells both generators when vmlinux.h or any header changed.
find_program(BPF_CLANG NAMES clang clang-14 REQUIRED)
find_program(BPFTOOL NAMES bpftool PATHS /usr/sbin REQUIRED)

set(NTPROF_BTF "/sys/kernel/btf/vmlinux" CACHE FILEPATH "BTF file vmlinux.h is generated from")
set(NTPROF_BPF_GEN_DIR "${CMAKE_BINARY_DIR}/bpf")
set(NTPROF_VMLINUX_H "${NTPROF_BPF_GEN_DIR}/vmlinux/vmlinux.h")
# enum ntprof_transport (included by ntprof_record.h), made from record.proto when CMake runs
set(NTPROF_BPF_GENERATED_INCLUDE "${NTPROF_BPF_GEN_DIR}/generated")
include(${PROJECT_SOURCE_DIR}/cmake/TransportValues.cmake)
ntprof_transport_values(${NTPROF_BPF_GENERATED_INCLUDE}/ntprof_transport_values.h)
# <bpf/usdt.bpf.h> includes <linux/errno.h> -> <asm/errno.h>, which Debian keeps under the
# multiarch directory that clang -target bpf does not search by itself.
set(NTPROF_BPF_SYSTEM_INCLUDES "")
if(CMAKE_LIBRARY_ARCHITECTURE)
  set(NTPROF_BPF_SYSTEM_INCLUDES -idirafter /usr/include/${CMAKE_LIBRARY_ARCHITECTURE})
endif()

add_custom_command(
  OUTPUT ${NTPROF_VMLINUX_H}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${NTPROF_BPF_GEN_DIR}/vmlinux
  COMMAND ${BPFTOOL} btf dump file ${NTPROF_BTF} format c > ${NTPROF_VMLINUX_H}.tmp
  COMMAND ${CMAKE_COMMAND} -E rename ${NTPROF_VMLINUX_H}.tmp ${NTPROF_VMLINUX_H}
  DEPENDS ${NTPROF_BTF}
  COMMENT "Generating vmlinux.h from ${NTPROF_BTF}"
  VERBATIM)
add_custom_target(ntprof_vmlinux_h DEPENDS ${NTPROF_VMLINUX_H})

function(ntprof_bpf_skeleton NAME SOURCE)
  set(obj ${NTPROF_BPF_GEN_DIR}/${NAME}.bpf.o)
  set(skel ${NTPROF_BPF_GEN_DIR}/${NAME}.skel.h)
  get_filename_component(src ${SOURCE} ABSOLUTE)
  get_filename_component(srcdir ${src} DIRECTORY)
  add_custom_command(
    OUTPUT ${obj}
    COMMAND ${BPF_CLANG} -g -O2 -target bpf -D__TARGET_ARCH_x86 -mcpu=v3
            -I${NTPROF_BPF_GEN_DIR}/vmlinux -I${srcdir} -I${CMAKE_SOURCE_DIR}/bpf
            -I${NTPROF_BPF_GENERATED_INCLUDE}
            ${NTPROF_BPF_SYSTEM_INCLUDES}
            -MD -MF ${obj}.d -c ${src} -o ${obj}
    DEPENDS ${src}
    DEPFILE ${obj}.d
    COMMENT "BPF ${NAME}.bpf.c"
    VERBATIM)
  add_custom_command(
    OUTPUT ${skel}
    COMMAND ${BPFTOOL} gen skeleton ${obj} name ${NAME} > ${skel}.tmp
    COMMAND ${CMAKE_COMMAND} -E rename ${skel}.tmp ${skel}
    DEPENDS ${obj}
    COMMENT "BPF skeleton ${NAME}.skel.h"
    VERBATIM)
  add_custom_target(ntprof_bpf_${NAME}_gen DEPENDS ${skel})
  add_dependencies(ntprof_bpf_${NAME}_gen ntprof_vmlinux_h)
  add_library(ntprof_bpf_${NAME} INTERFACE)
  add_dependencies(ntprof_bpf_${NAME} ntprof_bpf_${NAME}_gen)
  target_include_directories(ntprof_bpf_${NAME} INTERFACE ${NTPROF_BPF_GEN_DIR} ${srcdir}
                             ${CMAKE_SOURCE_DIR}/bpf ${NTPROF_BPF_GENERATED_INCLUDE})
  target_link_libraries(ntprof_bpf_${NAME} INTERFACE PkgConfig::LIBBPF)
endfunction()
