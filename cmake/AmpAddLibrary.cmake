# amp_add_library(<name> <sources>... [DEPENDS <targets>...] [LINK_LIBS <libs>...])
#
# A static, position-independent library of the project, exported through the AmpMLIR CMake
# package. Every library links the shared `MLIR` library (and through it LLVM), never MLIR's
# static component libraries, so a consumer that links libMLIR.so gets each symbol exactly once.
#
# Every such library compiles with one precompiled header (lib/Precompiled.h: the MLIR dialect,
# IR and pass headers nearly every source includes), built once by the AmpPrecompiledHeaders target
# (amp_add_precompiled_headers(), called once at the top level) and reused: the same flags
# (static, position-independent) and definitions. Parsing those headers was most of each source's
# compile time. CMake's own -DCMAKE_DISABLE_PRECOMPILE_HEADERS=ON turns it off.
function(amp_add_precompiled_headers)
  file(WRITE ${PROJECT_BINARY_DIR}/AmpPrecompiledHeaders.cpp "// The target that builds lib/Precompiled.h's PCH.\n")
  add_library(AmpPrecompiledHeaders OBJECT ${PROJECT_BINARY_DIR}/AmpPrecompiledHeaders.cpp)
  set_target_properties(AmpPrecompiledHeaders PROPERTIES POSITION_INDEPENDENT_CODE ON)
  target_include_directories(AmpPrecompiledHeaders PRIVATE ${MLIR_INCLUDE_DIRS} ${LLVM_INCLUDE_DIRS})
  target_precompile_headers(AmpPrecompiledHeaders PRIVATE ${PROJECT_SOURCE_DIR}/lib/Precompiled.h)
endfunction()

function(amp_add_library name)
  cmake_parse_arguments(ARG "" "" "DEPENDS;LINK_LIBS" ${ARGN})
  add_library(${name} STATIC ${ARG_UNPARSED_ARGUMENTS})
  set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  if(TARGET AmpPrecompiledHeaders)
    target_precompile_headers(${name} REUSE_FROM AmpPrecompiledHeaders)
  endif()
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
