#===- BpfObject.cmake - turn .bpf.c files into one libbpf skeleton ---------===#
# bpf_object(<name> <source>) compiles <source> with clang (-target bpf, CO-RE,
# BTF from the running kernel's vmlinux.h) into <name>.bpf.o;
# bpf_linked_skeleton() below links such objects and makes the skeleton.
find_program(BPF_CLANG NAMES clang-19 clang REQUIRED)
find_program(BPFTOOL NAMES bpftool PATHS /usr/sbin /usr/local/sbin REQUIRED)
set(SYSPGO_VMLINUX_BTF /sys/kernel/btf/vmlinux CACHE FILEPATH
    "BTF the BPF programs are compiled against (CO-RE relocates them at load)")

set(_bpf_gen_dir ${CMAKE_BINARY_DIR}/bpfgen)
set(_vmlinux_h ${_bpf_gen_dir}/vmlinux.h)
add_custom_command(
  OUTPUT ${_vmlinux_h}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${_bpf_gen_dir}
  COMMAND sh -c "${BPFTOOL} btf dump file ${SYSPGO_VMLINUX_BTF} format c > ${_vmlinux_h}.tmp && mv ${_vmlinux_h}.tmp ${_vmlinux_h}"
  COMMENT "Generating vmlinux.h from ${SYSPGO_VMLINUX_BTF}"
  VERBATIM)
add_custom_target(syspgo_vmlinux_h DEPENDS ${_vmlinux_h})

function(bpf_object name source)
  get_filename_component(_src ${source} ABSOLUTE)
  get_filename_component(_srcdir ${_src} DIRECTORY)
  set(_obj ${_bpf_gen_dir}/${name}.bpf.o)
  file(GLOB _bpf_headers ${_srcdir}/*.h)
  add_custom_command(
    OUTPUT ${_obj}
    COMMAND ${BPF_CLANG} -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_x86
            -I${_bpf_gen_dir} -I${_srcdir} -c ${_src} -o ${_obj}
    DEPENDS ${_src} ${_bpf_headers} syspgo_vmlinux_h
    COMMENT "BPF ${name}: compiling ${source}"
    VERBATIM)
endfunction()

# bpf_linked_skeleton(<name> <object>...) links objects compiled by
# bpf_object() into one (bpftool gen object; libbpf then reads and searches
# the kernel's BTF once for all of them) and generates <name>.skel.h from
# it. It defines an INTERFACE target <name>_skel that userspace links to get
# the include path of the skeleton and a build dependency on it.
function(bpf_linked_skeleton name)
  set(_objs)
  foreach(_o ${ARGN})
    list(APPEND _objs ${_bpf_gen_dir}/${_o}.bpf.o)
  endforeach()
  set(_linked ${_bpf_gen_dir}/${name}.bpf.o)
  set(_skel ${_bpf_gen_dir}/${name}.skel.h)
  add_custom_command(
    OUTPUT ${_linked}
    COMMAND ${BPFTOOL} gen object ${_linked} ${_objs}
    DEPENDS ${_objs}
    COMMENT "BPF: linking ${ARGN} into ${name}.bpf.o"
    VERBATIM)
  add_custom_command(
    OUTPUT ${_skel}
    COMMAND sh -c "${BPFTOOL} gen skeleton ${_linked} name ${name} > ${_skel}.tmp && mv ${_skel}.tmp ${_skel}"
    DEPENDS ${_linked}
    COMMENT "BPF ${name}: generating skeleton"
    VERBATIM)
  add_custom_target(${name}_skel_gen DEPENDS ${_skel})
  add_library(${name}_skel INTERFACE)
  # Only the generated dir: bpf/ itself is not on the include path (bpf/sched.h
  # would shadow <sched.h>); loaders include "bpf/<group>.h".
  target_include_directories(${name}_skel INTERFACE ${_bpf_gen_dir})
  add_dependencies(${name}_skel ${name}_skel_gen)
endfunction()
