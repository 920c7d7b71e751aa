# amp_add_library(<name> <sources>... [DEPENDS <targets>...] [LINK_LIBS <libs>...])
#
# A static, position-independent library of the project, exported through the AmpMLIR CMake
# package. Every library links the shared `MLIR` library (and through it LLVM), never MLIR's
# static component libraries, so a consumer that links libMLIR.so gets each symbol exactly once.
function(amp_add_library name)
  cmake_parse_arguments(ARG "" "" "DEPENDS;LINK_LIBS" ${ARGN})
  add_library(${name} STATIC ${ARG_UNPARSED_ARGUMENTS})
  set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  if(ARG_DEPENDS)
    add_dependencies(${name} ${ARG_DEPENDS})
  endif()
  target_include_directories(${name} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>
    $<INSTALL_INTERFACE:include>
    ${MLIR_INCLUDE_DIRS} ${LLVM_INCLUDE_DIRS})
  target_link_libraries(${name} PUBLIC ${ARG_LINK_LIBS} MLIR LLVM)
  install(TARGETS ${name} EXPORT AmpMLIRTargets ARCHIVE DESTINATION lib)
  set_property(GLOBAL APPEND PROPERTY AMP_EXPORTED_TARGETS ${name})
endfunction()
