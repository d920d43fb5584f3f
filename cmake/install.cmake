# install.cmake - what `cmake --install` puts in a prefix: the public headers
# (include/pagelab/), libpagelab.a and libpagelab.so, pagelab.pc and
# pagelab-static.pc for pkg-config, and a CMake package so that `find_package(pagelab)` gives
# pagelab::pagelab (static) and pagelab::pagelab_shared, both carrying the
# liburcu, compression (zlib, zstd, xz) and pthread link. pagelab-bench goes to bin/ when it is built,
# the man pages to share/man/man1.
include(CMakePackageConfigHelpers)

# pip install . (scikit-build-core sets SKBUILD): the shared library and
# pagelab-bench go inside the Python package, where pagelab.api and the
# pagelab command look for them; headers and the CMake package are for C.
if(SKBUILD)
  install(FILES $<TARGET_FILE:pagelab_shared> DESTINATION pagelab/_lib RENAME libpagelab.so)
  if(TARGET pagelab-bench)
    install(TARGETS pagelab-bench RUNTIME DESTINATION pagelab/_lib)
  endif()
  return()
endif()

install(DIRECTORY include/pagelab DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")
install(TARGETS pagelab pagelab_shared EXPORT pagelabTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
if(TARGET pagelab-bench)
  install(TARGETS pagelab-bench RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
# The man pages of pagelab and pagelab-bench, generated from their parsers
# (`make man`; python/tests/test_docs.py fails when they are out of date).
install(FILES man/pagelab.1 man/pagelab-bench.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)

set(PAGELAB_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/pagelab)
install(EXPORT pagelabTargets NAMESPACE pagelab:: DESTINATION ${PAGELAB_CMAKE_DIR})
configure_package_config_file(cmake/pagelabConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/pagelabConfig.cmake
                              INSTALL_DESTINATION ${PAGELAB_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/pagelabConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/pagelabConfig.cmake
              ${PROJECT_BINARY_DIR}/pagelabConfigVersion.cmake
        DESTINATION ${PAGELAB_CMAKE_DIR})

# pkg-config: -lpagelab; the static link (pkg-config --static) adds liburcu,
# zlib, zstd, xz and -pthread, which the shared library records itself.
# Relocatable: the prefix is found from where the .pc file lies, so
# `cmake --install build --prefix ANYWHERE` gives a working pagelab.pc.
file(RELATIVE_PATH PAGELAB_PC_TO_PREFIX /p/${CMAKE_INSTALL_LIBDIR}/pkgconfig /p)
# pagelab.pc links libpagelab.so, or with `cc -static` the archive (the
# linker takes only .a files then); pagelab-static.pc names libpagelab.a
# itself, for a static libpagelab in an otherwise dynamic program.
configure_file(cmake/pagelab.pc.in ${PROJECT_BINARY_DIR}/pagelab.pc @ONLY)
configure_file(cmake/pagelab-static.pc.in ${PROJECT_BINARY_DIR}/pagelab-static.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/pagelab.pc ${PROJECT_BINARY_DIR}/pagelab-static.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
