#===- ProtoSchema.cmake - compile a schemas/*.proto into C++ --------------===#
# syspgo_proto(NAME OUT_DIR SRC_VAR): runs protoc on schemas/NAME.proto,
# writing OUT_DIR/schemas/NAME.pb.cc and .pb.h (so code includes
# "schemas/NAME.pb.h" with OUT_DIR on its include path), and sets SRC_VAR
# in the caller to the .cc. Generated code is compiled without warnings: it
# is not ours to fix. Every build of a schema goes through here, so the
# main build and the fuzz build compile them alike.
find_package(Protobuf REQUIRED)

function(syspgo_proto name out_dir src_var)
  set(_src ${out_dir}/schemas/${name}.pb.cc)
  add_custom_command(
    OUTPUT ${_src} ${out_dir}/schemas/${name}.pb.h
    COMMAND ${CMAKE_COMMAND} -E make_directory ${out_dir}
    COMMAND protobuf::protoc --cpp_out=${out_dir} -I ${CMAKE_SOURCE_DIR} ${CMAKE_SOURCE_DIR}/schemas/${name}.proto
    DEPENDS ${CMAKE_SOURCE_DIR}/schemas/${name}.proto protobuf::protoc
    COMMENT "Compiling schemas/${name}.proto")
  set_source_files_properties(${_src} PROPERTIES COMPILE_OPTIONS "-w")
  set(${src_var} ${_src} PARENT_SCOPE)
endfunction()
