# The installed package: libraries, public headers and the CMake config that find_package(tbcheck) reads.
# Each folder calls tbcheck_install_library for its own target; the top level writes the config once.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(TBCHECK_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/tbcheck" CACHE STRING
    "Where the installed package config goes (relative to the install prefix)")

# Installs `target` (a static library) as tbcheck::<export_name> with the headers of the calling folder's
# include/ tree. The objects are position independent so the libraries also go into shared objects (the
# Python module is one); without semantic interposition GCC still inlines across the library's own
# functions, as it does in a non-PIC build.
function(tbcheck_install_library target export_name)
  set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON EXPORT_NAME ${export_name})
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-fno-semantic-interposition>)
  endif()
  install(TARGETS ${target} EXPORT tbcheckTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  if(IS_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}/include")
    install(DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}/include/" DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  endif()
endfunction()

# Called once, after every folder: the exported targets, the config and its version file.
function(tbcheck_install_package)
  set(TBCHECK_CONFIG_CUDA OFF)
  if(TARGET tbcheck_probe_kernels)
    set(TBCHECK_CONFIG_CUDA ON)
  endif()
  install(EXPORT tbcheckTargets NAMESPACE tbcheck:: DESTINATION ${TBCHECK_INSTALL_CMAKEDIR})
  configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/tbcheckConfig.cmake.in"
                                "${PROJECT_BINARY_DIR}/tbcheckConfig.cmake"
                                INSTALL_DESTINATION ${TBCHECK_INSTALL_CMAKEDIR})
  # 0.x: a minor version may change the API, so only the same major.minor is compatible.
  write_basic_package_version_file("${PROJECT_BINARY_DIR}/tbcheckConfigVersion.cmake"
                                   VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
  install(FILES "${PROJECT_BINARY_DIR}/tbcheckConfig.cmake" "${PROJECT_BINARY_DIR}/tbcheckConfigVersion.cmake"
          DESTINATION ${TBCHECK_INSTALL_CMAKEDIR})
endfunction()
