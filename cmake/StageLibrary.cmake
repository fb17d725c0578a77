#===- StageLibrary.cmake - a folder's production code, compiled once -------===#
# syspgo_library(<name> <source>...) makes the OBJECT library <name>_objects
# of a folder's sources, and the STATIC library <name> of exactly those
# objects, which the binaries and the tests link (the linker takes from it
# only the objects they reach). The folder sets the compile flags and usage
# requirements on <name>_objects; they reach whatever links <name>.
#
# The global property SYSPGO_OBJECT_LIBRARIES lists every such object
# library: the fuzz build (fuzz/, a clang-19 build directory of its own)
# compiles each of them instrumented for coverage and checked by ASan and
# UBSan, so its targets run exactly the code users run and no list of
# production sources or libraries is kept beside the folders' own.
function(syspgo_library name)
  add_library(${name}_objects OBJECT ${ARGN})
  add_library(${name} STATIC)
  target_link_libraries(${name} PUBLIC ${name}_objects)
  set_property(GLOBAL APPEND PROPERTY SYSPGO_OBJECT_LIBRARIES ${name}_objects)
endfunction()
